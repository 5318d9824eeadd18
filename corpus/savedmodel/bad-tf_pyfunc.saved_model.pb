ä
"serveØ

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

n10SelectŒ
‰

__inference_call_7#
__inference_call_7_0Placeholder&
__inference_call_7_1ReadVariableOp
__inference_call_7_2MatMul
__inference_call_7_3BiasAdd
__inference_call_7_4Relu 
__inference_call_7_5Identity/
__inference_call_7_6StatefulPartitionedCall#
__inference_call_7_7VarHandleOp(
__inference_call_7_8AssignVariableOp#
__inference_call_7_9EagerPyFunc