package mqtt

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
)

// Timeouts of one connection.
const (
	connectTimeout = 10 * time.Second
	keepAlive      = 30 * time.Second
	pingTimeout    = 10 * time.Second
	writeTimeout   = 10 * time.Second
)

// TLSFiles name the PEM files of a TLS connection.
type TLSFiles struct {
	CA         string // the CA that signed the broker's certificate; "" for the system's roots
	Cert, Key  string // the client certificate and its key; both or neither
	ServerName string // the name the broker's certificate carries; "" for the URL's host
}

// TLSConfig loads files into a TLS configuration (TLS 1.2 or newer,
// certificates always verified). Its errors name the file.
func TLSConfig(f TLSFiles) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.ServerName}
	if f.CA != "" {
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, fmt.Errorf("mqtt.ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("mqtt.ca_file: %s holds no PEM certificate", f.CA)
		}
		cfg.RootCAs = pool
	}
	if (f.Cert == "") != (f.Key == "") {
		return nil, errors.New("mqtt.cert_file: cert_file and key_file go together")
	}
	if f.Cert != "" {
		pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, fmt.Errorf("mqtt.cert_file, mqtt.key_file: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// pahoOptions are the options of the session's paho client: MQTT 3.1.1,
// a clean session, the Last Will, and no reconnect of paho's own (see the
// package doc).
func (s *session) pahoOptions() *paho.ClientOptions {
	o := s.c.opt
	po := paho.NewClientOptions().
		AddBroker(o.Broker).
		SetClientID(o.ClientID).
		SetUsername(o.Username).
		SetPassword(o.Password).
		SetProtocolVersion(4).
		SetCleanSession(true).
		SetAutoReconnect(false).
		SetConnectRetry(false).
		SetConnectTimeout(connectTimeout).
		SetKeepAlive(keepAlive).
		SetPingTimeout(pingTimeout).
		SetWriteTimeout(writeTimeout).
		SetDialer(&net.Dialer{Timeout: connectTimeout}).
		SetCustomOpenConnectionFn(openBatched).
		SetOrderMatters(true). // commands in the order sent; the handler never blocks
		SetWill(s.c.statusTopic(), offline, 1, true).
		SetConnectionLostHandler(func(_ paho.Client, err error) { s.lose(err) })
	if o.TLS != nil {
		po.SetTLSConfig(o.TLS)
	}
	return po
}

// problem is a connection error as the box, the log and the device event
// tell it.
type problem struct {
	msg   string // what happened, one line
	hint  string // what to do
	fault bool   // a person must fix it (authentication, TLS, configuration)
}

// classify explains a connection error. Authentication, TLS and
// configuration errors are faults: retrying will not fix them. A broker
// that is down, unreachable or drops us is not.
func classify(err error) problem {
	var (
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
		op        *net.OpError
		record    tls.RecordHeaderError
	)
	switch {
	case err == nil:
		return problem{msg: "connection lost", hint: "reconnecting"}
	case errors.Is(err, packets.ErrorRefusedBadUsernameOrPassword):
		return problem{msg: "the broker refused the user name or password", hint: "check mqtt.username and mqtt.password_file", fault: true}
	case errors.Is(err, packets.ErrorRefusedNotAuthorised):
		// mosquitto answers a wrong password with this code too.
		return problem{msg: "the broker refused the login: not authorised", hint: "check mqtt.username and mqtt.password_file (a wrong password looks the same) and the broker's access rules", fault: true}
	case errors.Is(err, packets.ErrorRefusedIDRejected):
		return problem{msg: "the broker rejected the client id", hint: "check mqtt.client_id", fault: true}
	case errors.Is(err, packets.ErrorRefusedBadProtocolVersion):
		return problem{msg: "the broker does not speak MQTT 3.1.1", hint: "use a broker that does (mosquitto, EMQX, HiveMQ)", fault: true}
	case errors.As(err, &unknownCA):
		return problem{msg: "the broker's TLS certificate is not trusted (signed by an unknown authority)", hint: "set mqtt.ca_file to the CA that signed it", fault: true}
	case errors.As(err, &hostname):
		return problem{msg: fmt.Sprintf("the broker's TLS certificate is not valid for %q", hostname.Host), hint: "connect by a name the certificate carries, or set mqtt.server_name", fault: true}
	case errors.As(err, &invalid):
		return problem{msg: "the broker's TLS certificate is invalid: " + invalid.Error(), hint: "renew the broker's certificate or fix the clock", fault: true}
	case errors.As(err, &verify):
		return problem{msg: "the broker's TLS certificate failed verification: " + verify.Err.Error(), hint: "check mqtt.ca_file and mqtt.server_name", fault: true}
	case errors.As(err, &op) && op.Op == "remote error": // a TLS alert from the broker
		return problem{msg: "the broker refused the TLS handshake: " + op.Err.Error(), hint: "check mqtt.cert_file and mqtt.key_file (a client certificate the broker trusts)", fault: true}
	case errors.As(err, &record):
		return problem{msg: "the broker does not speak TLS on this port", hint: "use tcp:// for a plain listener, or the broker's TLS port", fault: true}
	case errors.Is(err, packets.ErrorRefusedServerUnavailable):
		return problem{msg: "the broker is unavailable", hint: "it may be starting"}
	}
	return problem{msg: "the broker is unreachable: " + err.Error(), hint: "check mqtt.broker and that the broker runs"}
}
