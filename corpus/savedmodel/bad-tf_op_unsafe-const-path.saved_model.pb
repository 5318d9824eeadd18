ß
"serveÓ
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
/

save/ConstConst*
valueBB/etc/passwd
6
save/SaveV2SaveV2save/Const:0save/tensor_names
<
save/RestoreV2	RestoreV2save/Const:0save/tensor_names