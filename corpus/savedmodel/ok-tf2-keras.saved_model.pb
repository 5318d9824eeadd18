‡
"serveû

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

n10Select¯
ø

__inference_call_123%
__inference_call_123_0Placeholder(
__inference_call_123_1ReadVariableOp 
__inference_call_123_2MatMul!
__inference_call_123_3BiasAdd
__inference_call_123_4Relu"
__inference_call_123_5Identity1
__inference_call_123_6StatefulPartitionedCall%
__inference_call_123_7VarHandleOp*
__inference_call_123_8AssignVariableOp
±

__inference_save_45
__inference_save_45_0Const$
__inference_save_45_1Placeholder#
__inference_save_45_2
StringJoin(
__inference_save_45_3ShardedFilename
__inference_save_45_4SaveV2"
__inference_save_45_5	RestoreV2+
__inference_save_45_6MergeV2Checkpoints!
__inference_save_45_7Identity
__inference_save_45_8NoOp-
__inference_save_45_9StaticRegexFullMatch 
__inference_save_45_10Select