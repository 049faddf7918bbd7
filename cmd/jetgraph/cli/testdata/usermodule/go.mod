module example.com/mygraphs

go 1.26.0

require github.com/jetgraph/jetgraph v0.0.0-00010101000000-000000000000
