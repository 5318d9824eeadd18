
€root"_tf_keras_sequential*b{"name": "sequential", "class_name": "Sequential", "config": {"name": "sequential", "layers": []}}
Üroot.layer-1"_tf_keras_layer*¸{"name": "lambda", "trainable": true, "class_name": "Lambda", "config": {"name": "lambda", "function": ["4wEAAAAAAAAA\n", null, null], "function_type": "lambda", "module": "__main__"}}