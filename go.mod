module github.com/questbox/questbox

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/eclipse/paho.mqtt.golang v1.5.1
	go.etcd.io/bbolt v1.4.3
	golang.org/x/sync v0.25.0
	golang.org/x/sys v0.36.0
	golang.org/x/text v0.44.0
	periph.io/x/conn/v3 v3.7.3
	periph.io/x/host/v3 v3.8.5
	pgregory.net/rapid v1.3.0
)

require (
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/jonboulle/clockwork v0.5.0 // indirect
	golang.org/x/net v0.44.0 // indirect
)
