«
"serveŸ

n0Placeholder

n1ReadVariableOp

n2MatMul

n3BiasAdd


n4Relu

n5Identity

n6StatefulPartitionedCall

n7VarHandleOp

n8AssignVariableOp

n9Const

n10Placeholder

n11
StringJoin

n12ShardedFilename

n13SaveV2

n14	RestoreV2

n15MergeV2Checkpoints

n16Identity

n17NoOp

n18StaticRegexFullMatch

n19Select
)

save/ConstConst*
valueB	Bmodel
6
save/SaveV2SaveV2save/Const:0save/tensor_names
<
save/RestoreV2	RestoreV2save/Const:0save/tensor_names