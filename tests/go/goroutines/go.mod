module detrun/goroutines

go 1.20
