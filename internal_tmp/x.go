package x
import (
 _ "go.etcd.io/bbolt"
 _ "periph.io/x/conn/v3/gpio"
 _ "periph.io/x/conn/v3/gpio/gpiotest"
 _ "periph.io/x/host/v3"
 _ "github.com/eclipse/paho.mqtt.golang"
 _ "github.com/gorilla/websocket"
 _ "github.com/BurntSushi/toml"
 _ "golang.org/x/text/unicode/norm"
 _ "pgregory.net/rapid"
 _ "golang.org/x/sync/errgroup"
)
