á
"serveÕ

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

n10Select‰
†

__inference_call_9#
__inference_call_9_0Placeholder&
__inference_call_9_1ReadVariableOp
__inference_call_9_2MatMul
__inference_call_9_3BiasAdd
__inference_call_9_4Relu 
__inference_call_9_5Identity/
__inference_call_9_6StatefulPartitionedCall#
__inference_call_9_7VarHandleOp(
__inference_call_9_8AssignVariableOp 
__inference_call_9_9ReadFile