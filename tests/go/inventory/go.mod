module detrun/inventory

go 1.20
