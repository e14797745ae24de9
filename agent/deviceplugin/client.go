package deviceplugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/nodeproof/nodeproof/core/devicemanager"
)

// pluginClient is one connection to a plugin, from its registration until
// its ListAndWatch stream ends. A plugin that registers again gets a new
// pluginClient with a new EndpointID; the old one lives until its own stream
// ends, and its end is reported with its own ID.
type pluginClient struct {
	resource string
	socket   string
	id       devicemanager.EndpointID
	options  devicemanager.PluginOptions
	conn     *grpc.ClientConn
	api      v1beta1.DevicePluginClient
	// closeOnce makes close safe from Stop and from the stream's end at once.
	closeOnce sync.Once
}

func (c *pluginClient) close() {
	c.closeOnce.Do(func() { c.conn.Close() })
}

// String names the connection in errors and logs.
func (c *pluginClient) String() string {
	return fmt.Sprintf("%s (%s, connection %d)", c.resource, c.socket, c.id)
}

// dial connects to a plugin's socket and waits until the connection is
// ready, as upstream's blocking dial does, for at most timeout.
func dial(ctx context.Context, socket string, timeout time.Duration) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn.Connect()
	for state := conn.GetState(); state != connectivity.Ready; state = conn.GetState() {
		if !conn.WaitForStateChange(ctx, state) {
			conn.Close()
			return nil, fmt.Errorf("connection to %s still %v after %v: %w", socket, state, timeout, ctx.Err())
		}
	}
	return conn, nil
}

// connect dials a validated plugin, asks for its options, records it in the
// core and starts its ListAndWatch loop (upstream connectClient and
// PluginConnected).
func (a *Agent) connect(ctx context.Context, resource, socket string) error {
	conn, err := dial(ctx, socket, a.opts.DialTimeout)
	if err != nil {
		return fmt.Errorf("%s %v", errFailedToDial, err)
	}
	c := &pluginClient{resource: resource, socket: socket, conn: conn, api: v1beta1.NewDevicePluginClient(conn)}
	optsCtx, cancel := context.WithTimeout(ctx, a.opts.DialTimeout)
	opts, err := c.api.GetDevicePluginOptions(optsCtx, &v1beta1.Empty{})
	cancel()
	if err != nil {
		c.close()
		return fmt.Errorf("failed to get device plugin options: %v", err)
	}
	c.options = devicemanager.PluginOptions{
		PreStartRequired:                opts.GetPreStartRequired(),
		GetPreferredAllocationAvailable: opts.GetGetPreferredAllocationAvailable(),
	}

	a.mu.Lock()
	if a.stopped {
		a.mu.Unlock()
		c.close()
		return errors.New("the device plugin agent is stopping")
	}
	c.id, err = a.core.Connected(resource, socket, c.options)
	if err != nil {
		a.mu.Unlock()
		c.close()
		return err
	}
	a.clients[c.id] = c
	a.goroutines.Add(1)
	a.mu.Unlock()

	go a.watch(c)
	return nil
}

// watch runs a connection's ListAndWatch stream and, when it ends, tells the
// core that this connection, not whichever is current, went away.
func (a *Agent) watch(c *pluginClient) {
	defer a.goroutines.Done()
	err := a.listAndWatch(c)
	a.mu.Lock()
	current := a.core.Disconnected(c.resource, c.id, a.opts.Clock.Now())
	delete(a.clients, c.id)
	a.saveIfDue()
	a.mu.Unlock()
	c.close()
	a.log.Info("device plugin stream ended", "plugin", c.String(), "markedUnhealthy", current, "err", err)
}

// listAndWatch feeds every snapshot of the stream to the core until the
// stream ends. A snapshot the core rejects is logged and dropped; the
// previous state stays.
func (a *Agent) listAndWatch(c *pluginClient) error {
	stream, err := c.api.ListAndWatch(a.ctx, &v1beta1.Empty{})
	if err != nil {
		return err
	}
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		devices := make([]devicemanager.Device, 0, len(resp.GetDevices()))
		for _, d := range resp.GetDevices() {
			dev := devicemanager.Device{ID: d.GetID(), Health: d.GetHealth()}
			for _, n := range d.GetTopology().GetNodes() {
				dev.NUMANodes = append(dev.NUMANodes, n.GetID())
			}
			devices = append(devices, dev)
		}
		a.mu.Lock()
		err = a.core.Update(c.resource, devices)
		a.saveIfDue()
		a.mu.Unlock()
		if err != nil {
			a.log.Error("rejected ListAndWatch snapshot", "plugin", c.String(), "err", err)
		}
	}
}
