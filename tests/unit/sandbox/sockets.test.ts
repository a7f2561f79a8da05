/**
 * The host's sockets hidden from confined entries (`sockets.ts`): where each kind is looked for,
 * and the addresses in the environment that move one (Docker's and Podman's `unix://`, D-Bus's
 * `unix:path=`, PulseAudio's, Wayland's display name); in an entry's policy, denied and marked to
 * be hidden by a mount, unless a declared `read:` re-opens one.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NO_SANDBOX_SETTINGS } from "../../../src/manifest/sandbox.ts";
import type { SandboxSettings } from "../../../src/manifest/types.ts";
import type { Level } from "../../../src/sandbox/landlock.ts";
import { type PolicyContext, resolvePolicy } from "../../../src/sandbox/policy.ts";
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

const settings = (over: Partial<SandboxSettings> = {}): SandboxSettings => ({
  ...NO_SANDBOX_SETTINGS,
  ...over,
});
const levelAt = (fs: { path: string; level: Level }[], p: string) => fs.find((r) => r.path === p)?.level;
const ctx: PolicyContext = {
  platform: "linux",
  home: "/home/u",
  env: { HOME: "/home/u" },
  interpolation: { env: {}, workspaceFolder: "/work/p", userHome: "/home/u" },
  adapterDir: "/work/adapters/notes",
  stateDir: "/home/u/.local/state/hermit",
  tmpDir: "/home/u/.local/state/hermit/tmp/1-x",
  servedAdapters: [],
  requireAll: false,
};

describe("resolvePolicy: the host's sockets", () => {
  const withAgent: PolicyContext = {
    ...ctx,
    env: { HOME: "/home/u", SSH_AUTH_SOCK: "/tmp/ssh-abc/agent.42", XDG_RUNTIME_DIR: "/run/user/1000" },
    interpolation: { ...ctx.interpolation, env: { SSH_AUTH_SOCK: "/tmp/ssh-abc/agent.42" } },
    uid: 1000,
  };
  const sockets = (fs: { path: string; level: Level; socket?: boolean }[]) =>
    fs.filter((r) => r.socket).map((r) => r.path).sort();

  it("are denied and marked to be hidden by a mount, for every kind of entry", () => {
    for (const trust of ["full", "untrusted"] as const) {
      const p = resolvePolicy(
        { label: "mcp_servers.s", kind: "server", trust, settings: settings() },
        withAgent,
      );
      const marked = sockets(p.fs);
      for (
        const at of [
          "/home/u/.1password",
          "/home/u/.gnupg",
          "/home/u/.ssh",
          "/run/user/1000/gcr",
          "/run/user/1000/gnupg",
          "/run/user/1000/keyring",
          "/run/user/1000/openssh_agent",
          "/run/user/1000/ssh-agent.socket",
          "/tmp/ssh-*",
          "/tmp/ssh-abc/agent.42",
          "/var/run/docker.sock",
          "/run/user/1000/docker.sock",
          "/run/user/1000/bus",
          "/tmp/.X11-unix",
          "/run/user/1000/wayland-*",
          "/run/user/1000/pipewire-*",
        ]
      ) assert.ok(marked.includes(at), at);
      for (const at of marked) assert.equal(levelAt(p.fs, at), "deny", at);
    }
  });

  it("a declared read: line re-opens one (a git server that pushes over SSH)", () => {
    const p = resolvePolicy({
      label: "tools.git",
      kind: "tool",
      trust: "full",
      settings: settings({ read: ["${env:SSH_AUTH_SOCK}"] }),
    }, withAgent);
    assert.equal(levelAt(p.fs, "/tmp/ssh-abc/agent.42"), "read");
    assert.ok(!sockets(p.fs).includes("/tmp/ssh-abc/agent.42"));
  });

  it("not on macOS (Seatbelt's profile is another matter)", () => {
    const p = resolvePolicy(
      { label: "tools.t", kind: "tool", trust: "full", settings: settings() },
      { ...withAgent, platform: "darwin" },
    );
    assert.deepEqual(sockets(p.fs), []);
  });
});
