ý
"serveñ

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

n10Select

n11	WriteFile

n12MatchingFiles