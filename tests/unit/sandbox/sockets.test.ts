/**
 * The host's sockets hidden from confined entries (`sockets.ts`): where each kind is looked for,
 * and the addresses in the environment that move one (Docker's and Podman's `unix://`, D-Bus's
 * `unix:path=`, PulseAudio's, Wayland's display name).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { dbusPaths, hostSockets, unixUrlPath } from "../../../src/sandbox/sockets.ts";

const paths = (env: Record<string, string>, uid?: number) =>
  hostSockets("linux", "/home/u", env, uid).map((s) => s.path);

describe("the host's sockets", () => {
  it("container engines, the session bus, the display and sound, in their usual places", () => {
    const got = paths({ XDG_RUNTIME_DIR: "/run/user/1000" });
    for (
      const at of [
        "/run/docker.sock",
        "/var/run/docker.sock",
        "/run/podman/podman.sock",
        "/run/containerd/containerd.sock",
        "/home/u/.docker/desktop/docker.sock",
        "/run/user/1000/docker.sock",
        "/run/user/1000/podman/podman.sock",
        "/run/user/1000/bus",
        "/run/user/1000/systemd/private",
        "/run/user/1000/at-spi",
        "/tmp/.X11-unix",
        "/run/user/1000/wayland-*",
        "/run/user/1000/pulse",
        "/run/user/1000/pipewire-*",
      ]
    ) assert.ok(got.includes(at), at);
    assert.ok(!got.includes("/run/user/1000"), "the runtime directory itself stays");
    assert.ok(!got.some((p) => p.startsWith("/run/dbus")), "the system bus stays");
  });

  it("for root, the system bus too (its calls need no one's consent) and systemd's own socket", () => {
    const root = paths({}, 0);
    assert.ok(root.includes("/run/dbus/system_bus_socket"));
    assert.ok(root.includes("/run/systemd/private"));
    assert.ok(!paths({}, 1000).includes("/run/dbus/system_bus_socket"));
  });

  it("without XDG_RUNTIME_DIR, /run/user/UID; without either, none of the runtime ones", () => {
    assert.ok(paths({}, 1000).includes("/run/user/1000/bus"));
    assert.ok(!paths({}).some((p) => p.includes("/run/user/")));
  });

  it("follow the variables that move them", () => {
    const got = paths({
      XDG_RUNTIME_DIR: "/run/user/1000",
      DOCKER_HOST: "unix:///srv/docker.sock",
      CONTAINER_HOST: "unix:///srv/podman.sock",
      DBUS_SESSION_BUS_ADDRESS: "unix:path=/tmp/dbus-a%2cb,guid=1;unix:abstract=/tmp/dbus-x",
      PULSE_SERVER: "{abc}unix:/srv/pulse tcp:host",
      WAYLAND_DISPLAY: "compositor",
    });
    for (
      const at of [
        "/srv/docker.sock",
        "/srv/podman.sock",
        "/tmp/dbus-a,b",
        "/srv/pulse",
        "/run/user/1000/compositor",
      ]
    ) assert.ok(got.includes(at), at);
    assert.ok(!got.includes("/tmp/dbus-x"), "an abstract address is Landlock's scoping's");
  });

  it("an address that is not a Unix path adds nothing", () => {
    assert.equal(unixUrlPath("tcp://127.0.0.1:2375"), undefined);
    assert.equal(unixUrlPath("unix:///run/docker.sock"), "/run/docker.sock");
    assert.deepEqual(dbusPaths("tcp:host=localhost,port=1"), []);
    assert.deepEqual(dbusPaths("unix:path=%zz"), []);
    assert.deepEqual(
      paths({ DOCKER_HOST: "unix://relative.sock" }).filter((p) => p.includes("relative")),
      [],
    );
  });

  it("none on macOS", () => {
    assert.deepEqual(hostSockets("darwin", "/Users/a", { XDG_RUNTIME_DIR: "/tmp/r" }, 501), []);
  });
});
