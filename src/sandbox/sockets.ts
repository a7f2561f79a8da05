/**
 * The host's Unix sockets a confined entry may not connect to (Linux). Landlock does not govern
 * connecting to a socket with a path, and a network namespace does not cut one, so each of these
 * is hidden by a mount in the entry's mount namespace (`socket` rules: an empty read-only tmpfs
 * over a directory, /dev/null over a socket) rather than only made unreadable. Two kinds:
 *
 * - agents that act with the user's keys: ssh-agent, gpg-agent, 1Password's, GNOME's and gcr's;
 * - services that give their client power over the user or the machine: container engines
 *   (Docker, Podman, containerd, BuildKit, CRI-O, LXD, Incus: root, or the user's everything, for
 *   whoever may connect), the D-Bus session bus (the Secret Service keyring, and systemd --user,
 *   which starts any command outside the sandbox) and systemd --user's own socket, the
 *   accessibility bus, the display (X servers and Wayland compositors: keystrokes, the screen,
 *   typed input into other windows) and sound (PulseAudio, PipeWire: the microphone, the camera,
 *   screen casts).
 *
 * Left reachable: the D-Bus system bus but for root (for others its policy and polkit decide per
 * caller, as for any of the user's programs; resolvers and printing use it), databases' sockets
 * (a database tool is the usual reason to run one) and sockets the user's own programs make in
 * their own places. A declared `read:` on one of these paths re-opens it. Pure: home, environment
 * and uid in; globs and missing paths are the launcher's to expand.
 */
import path from "node:path";
import { dedupe, type Secret } from "./secrets.ts";

/** Agents' sockets in the user's runtime directory (`$XDG_RUNTIME_DIR`, else `/run/user/UID`). */
const AGENTS_IN_RUNTIME: [string, string][] = [
  ["gnupg", "gpg-agent sockets"],
  ["ssh-agent.socket", "ssh-agent socket (systemd)"],
  ["openssh_agent", "ssh-agent socket"],
  ["keyring", "GNOME Keyring's SSH agent"],
  ["gcr", "gcr's SSH agent"],
];

const DOCKER = "Docker's socket (root, for a user in the docker group)";

/** Services' sockets at fixed places. */
const SERVICES: [string, string][] = [
  ["/run/docker.sock", DOCKER],
  ["/var/run/docker.sock", DOCKER],
  ["/run/podman/podman.sock", "Podman's socket (root)"],
  ["/run/containerd/containerd.sock", "containerd's socket (root)"],
  ["/run/containerd/containerd.sock.ttrpc", "containerd's socket (root)"],
  ["/run/buildkit/buildkitd.sock", "BuildKit's socket (root)"],
  ["/run/crio/crio.sock", "CRI-O's socket (root)"],
  ["/var/lib/incus/unix.socket", "Incus's socket (root, for a user in incus-admin)"],
  ["/var/lib/lxd/unix.socket", "LXD's socket (root, for a user in the lxd group)"],
  ["/var/snap/lxd/common/lxd/unix.socket", "LXD's socket (root, for a user in the lxd group)"],
  ["/run/libvirt/libvirt-sock", "libvirt's socket (root, for a user in the libvirt group)"],
  ["/run/systemd/private", "systemd's own socket (root: runs commands unconfined)"],
  ["/tmp/.X11-unix", "X servers' sockets (keystrokes, the screen, typing into other windows)"],
];

/** For root alone: the system bus, where root's calls (systemd's units) need no one's consent. */
const ROOTS_SERVICES: [string, string][] = [
  ["/run/dbus/system_bus_socket", "D-Bus system bus (as root: systemd runs commands unconfined)"],
  ["/var/run/dbus/system_bus_socket", "D-Bus system bus (as root: systemd runs commands unconfined)"],
];

/** Services' sockets under the home directory (Docker Desktop's). */
const SERVICES_IN_HOME: [string, string][] = [
  [".docker/run/docker.sock", "Docker Desktop's socket"],
  [".docker/desktop/docker.sock", "Docker Desktop's socket"],
];

/** Services' sockets in the user's runtime directory. */
const SERVICES_IN_RUNTIME: [string, string][] = [
  ["docker.sock", "rootless Docker's socket"],
  ["podman/podman.sock", "rootless Podman's socket"],
  ["buildkit", "rootless BuildKit's socket"],
  ["bus", "D-Bus session bus (the Secret Service keyring; systemd --user runs commands unconfined)"],
  ["systemd/private", "systemd --user's socket (runs commands unconfined)"],
  ["at-spi", "accessibility bus (reads and types into other windows)"],
  ["wayland-*", "Wayland compositor (the screen, typing into other windows)"],
  ["pulse", "PulseAudio (the microphone)"],
  ["pipewire-*", "PipeWire (the microphone, the camera, screen casts)"],
];

/** The socket path of a `unix://PATH` (Docker, Podman) address, when it is one. Pure. */
export function unixUrlPath(address: string | undefined): string | undefined {
  return address?.startsWith("unix://") ? address.slice("unix://".length) : undefined;
}

/**
 * The socket paths of a D-Bus address list (`unix:path=/run/user/1000/bus,guid=…;…`, values
 * %-escaped). Abstract ones are left out: Landlock's scoping already keeps them. Pure.
 */
export function dbusPaths(address: string | undefined): string[] {
  const out: string[] = [];
  for (const one of (address ?? "").split(";")) {
    if (!one.startsWith("unix:")) continue;
    for (const pair of one.slice("unix:".length).split(",")) {
      if (!pair.startsWith("path=")) continue;
      try {
        out.push(decodeURIComponent(pair.slice("path=".length)));
      } catch {
        // a malformed escape: not an address libdbus would use either
      }
    }
  }
  return out;
}

export function hostSockets(
  platform: NodeJS.Platform,
  home: string,
  env: Readonly<Record<string, string | undefined>>,
  uid: number | undefined,
): Secret[] {
  if (platform !== "linux") return [];
  const p = path.posix;
  const out: Secret[] = [];
  const add = (at: string | undefined, what: string) => {
    if (at && p.isAbsolute(at)) out.push({ path: p.normalize(at), what });
  };
  add(env.SSH_AUTH_SOCK, "ssh-agent socket");
  add("/tmp/ssh-*", "ssh-agent sockets");
  add(p.join(home, ".ssh"), "SSH keys, an agent's socket");
  add(p.join(home, ".gnupg"), "gpg-agent sockets");
  add(env.GNUPGHOME, "gpg-agent sockets");
  add(p.join(home, ".1password"), "1Password's SSH agent");
  for (const [at, what] of [...SERVICES, ...(uid === 0 ? ROOTS_SERVICES : [])]) add(at, what);
  for (const [rel, what] of SERVICES_IN_HOME) add(p.join(home, rel), what);
  add(unixUrlPath(env.DOCKER_HOST), DOCKER);
  add(unixUrlPath(env.CONTAINER_HOST), "Podman's socket");
  for (const at of dbusPaths(env.DBUS_SESSION_BUS_ADDRESS)) add(at, "D-Bus session bus");
  for (const server of (env.PULSE_SERVER ?? "").split(/\s+/)) {
    add(/^(?:\{[^}]*\})?unix:(\/.*)$/.exec(server)?.[1], "PulseAudio (the microphone)");
  }
  const runtime = env.XDG_RUNTIME_DIR && p.isAbsolute(env.XDG_RUNTIME_DIR)
    ? env.XDG_RUNTIME_DIR
    : uid === undefined
    ? undefined
    : `/run/user/${uid}`;
  if (runtime) {
    for (const [rel, what] of [...AGENTS_IN_RUNTIME, ...SERVICES_IN_RUNTIME]) add(p.join(runtime, rel), what);
  }
  // a display named otherwise than wayland-N: a name in the runtime directory, or a path
  const wayland = env.WAYLAND_DISPLAY;
  if (wayland) {
    add(p.isAbsolute(wayland) ? wayland : runtime && p.join(runtime, wayland), "Wayland compositor");
  }
  return dedupe(out);
}
