¿
"serve³

n0Const

n1Placeholder

n2
StringJoin

n3ShardedFilename

n4SaveV2

n5	RestoreV2

n6MergeV2Checkpoints

n7Identity


n8NoOp

n9StaticRegexFullMatch

n10Selectç
ä

__inference_call_1#
__inference_call_1_0Placeholder&
__inference_call_1_1ReadVariableOp
__inference_call_1_2MatMul
__inference_call_1_3BiasAdd
__inference_call_1_4Relu 
__inference_call_1_5Identity/
__inference_call_1_6StatefulPartitionedCall#
__inference_call_1_7VarHandleOp(
__inference_call_1_8AssignVariableOp