
€root"_tf_keras_sequential*b{"name": "sequential", "class_name": "Sequential", "config": {"name": "sequential", "layers": []}}
Ñroot.layer-1"_tf_keras_layer*­{"name": "dense", "trainable": true, "expects_training_arg": false, "dtype": "float32", "class_name": "Dense", "config": {"name": "dense", "units": 2, "activation": "relu"}}