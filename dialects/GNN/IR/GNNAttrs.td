//===- GNNAttrs.td - gnn enums and attributes --------------*- tablegen -*-===//
//
// Part of gnnc. Built-in message, reduce and elementwise functions.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_IR_GNNATTRS_TD
#define GNN_IR_GNNATTRS_TD

include "GNN/IR/GNNDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def GNN_GraphStructure : I32EnumAttr<"GraphStructure",
    "a promise about the edge set that lowerings may exploit", [
      I32EnumAttrCase<"General", 0, "general">,
      I32EnumAttrCase<"Complete", 1, "complete">,
      I32EnumAttrCase<"Causal", 2, "causal">,
      I32EnumAttrCase<"Bipartite", 3, "bipartite">
    ]> {
  let cppNamespace = "::mlir::gnn";
  let genSpecializedAttr = 0;
}

def GNN_Target : I32EnumAttr<"Target",
    "where a message operand lives: source node, destination node or edge", [
      I32EnumAttrCase<"Src", 0, "u">,
      I32EnumAttrCase<"Dst", 1, "v">,
      I32EnumAttrCase<"Edge", 2, "e">
    ]> {
  let cppNamespace = "::mlir::gnn";
}

def GNN_TargetArrayAttr : TypedArrayAttrBase<GNN_Target,
    "array of message operand targets">;

def GNN_BinaryOp : I32EnumAttr<"BinaryOp",
    "the operation of a built-in message function", [
      I32EnumAttrCase<"Copy", 0, "copy">,
      I32EnumAttrCase<"Add", 1, "add">,
      I32EnumAttrCase<"Sub", 2, "sub">,
      I32EnumAttrCase<"Mul", 3, "mul">,
      I32EnumAttrCase<"Div", 4, "div">,
      I32EnumAttrCase<"Dot", 5, "dot">
    ]> {
  let cppNamespace = "::mlir::gnn";
  let genSpecializedAttr = 0;
}

def GNN_ReduceKind : I32EnumAttr<"ReduceKind",
    "how messages are aggregated into their destination node", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Max", 1, "max">,
      I32EnumAttrCase<"Min", 2, "min">,
      I32EnumAttrCase<"Mean", 3, "mean">
    ]> {
  let cppNamespace = "::mlir::gnn";
}

def GNN_ReduceKindArrayAttr : TypedArrayAttrBase<GNN_ReduceKind,
    "array of reduce functions">;

def GNN_UnaryKind : I32EnumAttr<"UnaryKind",
    "a built-in elementwise function", [
      I32EnumAttrCase<"Scale", 0, "scale">,
      I32EnumAttrCase<"Clamp", 1, "clamp">,
      I32EnumAttrCase<"Exp", 2, "exp">,
      I32EnumAttrCase<"Relu", 3, "relu">,
      I32EnumAttrCase<"Neg", 4, "neg">
    ]> {
  let cppNamespace = "::mlir::gnn";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class GNN_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<GNN_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def GNN_MessageFnAttr : GNN_Attr<"MessageFn", "fn"> {
  let summary = "a DGL built-in message function";
  let description = [{
    One of DGL's built-in message functions, spelled as in DGL:
    `copy_u`, `copy_v`, `copy_e`, or `X_OP_Y` where `X` and `Y` are distinct
    targets among `u` (source node), `v` (destination node) and `e` (edge),
    and `OP` is `add`, `sub`, `mul`, `div` or `dot`.

    Binary functions broadcast the per-item shapes of their operands (the
    shape without the leading node/edge dimension) from the right, as NumPy
    does; `dot` then sums the last dimension, keeping it with size 1.

    ```mlir
    #gnn.fn<u_dot_v>   // score = sum(k_src * q_dst, -1, keepdim)
    #gnn.fn<u_mul_e>   // message = v_src * score_edge
    #gnn.fn<copy_e>    // message = score_edge
    ```
  }];
  let parameters = (ins
    EnumParameter<GNN_BinaryOp>:$op,
    EnumParameter<GNN_Target>:$lhs,
    EnumParameter<GNN_Target>:$rhs
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// 1 for copy_*, 2 for binary functions.
    unsigned getArity() const { return getOp() == BinaryOp::Copy ? 1 : 2; }
    /// The target of operand `i` (0 or 1).
    Target getTarget(unsigned i) const { return i == 0 ? getLhs() : getRhs(); }
    /// The DGL spelling, e.g. "u_dot_v".
    std::string getName() const;
    /// Parses a DGL spelling; returns a null attribute if it is not one.
    static MessageFnAttr parseName(MLIRContext *ctx, StringRef name);
    /// Parses a DGL spelling without the `#gnn.fn`, reporting unknown names.
    static MessageFnAttr parseBody(AsmParser &parser);
  }];
}

def GNN_MessageFnArrayAttr : TypedArrayAttrBase<GNN_MessageFnAttr,
    "array of built-in message functions">;

def GNN_UnaryFnAttr : GNN_Attr<"UnaryFn", "unary"> {
  let summary = "a built-in elementwise function";
  let description = [{
    An elementwise function applied to every element of a feature:
    `scale(c)` multiplies by `c`, `clamp(lo, hi)` clamps into `[lo, hi]`,
    `exp`, `relu` and `neg` are what they say. A chain of them expresses the
    tutorial's `scaled_exp` (`exp(clamp(x / sqrt(dk), -5, 5))`).

    ```mlir
    #gnn.unary<scale(0.125)>
    #gnn.unary<clamp(-5.0, 5.0)>
    #gnn.unary<exp>
    ```
  }];
  let parameters = (ins
    EnumParameter<GNN_UnaryKind>:$kind,
    APFloatParameter<"first constant (scale factor or lower bound)">:$a,
    APFloatParameter<"second constant (upper bound)">:$b
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "UnaryKind":$kind, CArg<"double", "0.0">:$a,
                     CArg<"double", "0.0">:$b), [{
      return $_get($_ctxt, kind, ::llvm::APFloat(a), ::llvm::APFloat(b));
    }]>
  ];
  let extraClassDeclaration = [{
    /// How many constants the function takes (0, 1 or 2).
    static unsigned getNumConstants(UnaryKind kind);
    /// Parses `name` or `name(c)` or `name(lo, hi)` without the `#gnn.unary`.
    static UnaryFnAttr parseBody(AsmParser &parser);
    void printBody(AsmPrinter &printer) const;
    /// Applies the function to `x` (used by folders and reference code).
    double apply(double x) const;
  }];
}

def GNN_UnaryFnArrayAttr : TypedArrayAttrBase<GNN_UnaryFnAttr,
    "chain of built-in elementwise functions">;

#endif // GNN_IR_GNNATTRS_TD
