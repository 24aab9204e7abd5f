module httpserver

go 1.20
