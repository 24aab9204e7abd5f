module detrun/clockreads

go 1.20
