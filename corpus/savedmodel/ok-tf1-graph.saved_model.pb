Š
"serveþ
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