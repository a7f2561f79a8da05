/**
 * The seccomp filter the launcher installs for every entry: a small classic-BPF program over
 * `struct seccomp_data`, built purely as bytes.
 *
 * - always, the kernel's key management (`keyctl`, `add_key`, `request_key`): refused with ENOSYS,
 *   as on a kernel without keyrings (programs fall back to files). An entry would otherwise read
 *   and change the keys of the user's session and user keyrings, and Kerberos tickets kept in
 *   `KEYRING:persistent`;
 *
 * and where its network is cut or listed (`none`, `tcp-only`; for `all` nothing more):
 * - any architecture but the native one (32-bit compat calls) and, on x86_64, the x32 ABI: the
 *   process is killed (the filter only knows native syscall numbers);
 * - `io_uring_setup`: refused (io_uring can open sockets without the socket syscall);
 * - `network: none`: `socket(AF_INET|AF_INET6, …)` refused;
 * - a destination list: inet sockets refused unless they are TCP streams (UDP, raw and SCTP
 *   sockets are refused: no DNS over UDP, no datagram exfiltration; TCP is left to Landlock), and
 *   `sendto`/`sendmsg`/`sendmmsg` with MSG_FASTOPEN refused: TCP Fast Open connects inside the
 *   send, where Landlock's connect check never runs (TCP_FASTOPEN_CONNECT is harmless: its
 *   `connect` is checked); `listen` refused: on an unbound socket it binds a random port on every
 *   address, where Landlock's bind check never runs (the descriptor's family is out of the
 *   filter's sight, so Unix sockets cannot listen either).
 *
 * Refused calls fail with EPERM. Everything else is allowed.
 */
export type SeccompNet = "none" | "tcp-only" | "all";

const AUDIT_ARCH = { x64: 0xc000003e, arm64: 0xc00000b7 } as const;
const NR = {
  x64: {
    socket: 41,
    sendto: 44,
    sendmsg: 46,
    listen: 50,
    sendmmsg: 307,
    add_key: 248,
    request_key: 249,
    keyctl: 250,
  },
  arm64: {
    socket: 198,
    listen: 201,
    sendto: 206,
    sendmsg: 211,
    sendmmsg: 269,
    add_key: 217,
    request_key: 218,
    keyctl: 219,
  },
} as const;
const IO_URING_SETUP = 425;
const X32_SYSCALL_BIT = 0x40000000;
const AF_INET = 2;
const AF_INET6 = 10;
const SOCK_STREAM = 1;
const SOCK_TYPE_MASK = 0xf;
const IPPROTO_TCP = 6;
const MSG_FASTOPEN = 0x20000000;
const EPERM = 1;
const ENOSYS = 38;

// BPF opcodes
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const AND_K = 0x54;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000 | EPERM;
const RET_ENOSYS = 0x00050000 | ENOSYS;
const RET_KILL_PROCESS = 0x80000000;

// offsets in struct seccomp_data (little endian: the low word of each 64-bit argument first)
const OFF_NR = 0;
const OFF_ARCH = 4;
const arg = (i: number) => 16 + 8 * i;

/** A jump target: the next instruction, or a label (the exits are labels too). */
type To = "next" | "errno" | "enosys" | "allow" | "kill" | "socket" | "inet" | "flags2" | "flags3";

interface Step {
  code: number;
  k: number;
  jt: To;
  jf: To;
}

/** The checks of a cut (`none`) or listed (`tcp-only`) network, after the call's number is loaded. */
function networkChecks(
  net: "none" | "tcp-only",
  nr: typeof NR[keyof typeof NR],
  op: (code: number, k: number) => void,
  jump: (code: number, k: number, jt: To, jf: To) => void,
  label: (name: To) => void,
): void {
  jump(JEQ_K, IO_URING_SETUP, "errno", "next");
  if (net === "none") jump(JEQ_K, nr.socket, "socket", "allow");
  else {
    jump(JEQ_K, nr.socket, "socket", "next");
    jump(JEQ_K, nr.listen, "errno", "next");
    jump(JEQ_K, nr.sendto, "flags3", "next");
    jump(JEQ_K, nr.sendmmsg, "flags3", "next");
    jump(JEQ_K, nr.sendmsg, "flags2", "allow");
  }
  label("socket");
  op(LD_W_ABS, arg(0));
  if (net === "none") {
    jump(JEQ_K, AF_INET, "errno", "next");
    jump(JEQ_K, AF_INET6, "errno", "allow");
    return;
  }
  // not inet: allow; inet: only SOCK_STREAM with protocol 0 or TCP
  jump(JEQ_K, AF_INET, "inet", "next");
  jump(JEQ_K, AF_INET6, "inet", "allow");
  label("inet");
  op(LD_W_ABS, arg(1));
  op(AND_K, SOCK_TYPE_MASK);
  jump(JEQ_K, SOCK_STREAM, "next", "errno");
  op(LD_W_ABS, arg(2));
  jump(JEQ_K, 0, "allow", "next");
  jump(JEQ_K, IPPROTO_TCP, "allow", "errno");
  // the send calls' flags: sendto's and sendmmsg's fourth argument, sendmsg's third
  label("flags3");
  op(LD_W_ABS, arg(3));
  jump(JSET_K, MSG_FASTOPEN, "errno", "allow");
  label("flags2");
  op(LD_W_ABS, arg(2));
  jump(JSET_K, MSG_FASTOPEN, "errno", "allow");
}

/** The filter as `struct sock_filter[]` bytes (8 per instruction). */
export function seccompFilter(arch: "x64" | "arm64", net: SeccompNet): Uint8Array {
  const steps: Step[] = [];
  const at = new Map<To, number>();
  const op = (code: number, k: number) => steps.push({ code, k, jt: "next", jf: "next" });
  const jump = (code: number, k: number, jt: To, jf: To) => steps.push({ code, k, jt, jf });
  const label = (name: To) => at.set(name, steps.length);
  const nr = NR[arch];

  // with the network open, another architecture's calls are let through (a 32-bit program still
  // runs); where it is cut they would get round the socket checks, so they kill the process
  const foreign: To = net === "all" ? "allow" : "kill";
  op(LD_W_ABS, OFF_ARCH);
  jump(JEQ_K, AUDIT_ARCH[arch], "next", foreign);
  op(LD_W_ABS, OFF_NR);
  if (arch === "x64") jump(JGE_K, X32_SYSCALL_BIT, foreign, "next");
  jump(JEQ_K, nr.keyctl, "enosys", "next");
  jump(JEQ_K, nr.add_key, "enosys", "next");
  jump(JEQ_K, nr.request_key, "enosys", net === "all" ? "allow" : "next");
  if (net !== "all") networkChecks(net, nr, op, jump, label);
  label("enosys");
  op(RET_K, RET_ENOSYS);
  label("errno");
  op(RET_K, RET_ERRNO);
  label("allow");
  op(RET_K, RET_ALLOW);
  label("kill");
  op(RET_K, RET_KILL_PROCESS);

  const out = new Uint8Array(steps.length * 8);
  const view = new DataView(out.buffer);
  steps.forEach((x, i) => {
    // jumps are relative and forward only, at most 255 instructions
    const rel = (to: To) => {
      if (to === "next") return 0;
      const r = at.get(to)! - i - 1;
      if (!(r >= 0 && r <= 255)) throw new Error(`seccomp: no jump to ${to} from ${i}`);
      return r;
    };
    view.setUint16(i * 8, x.code, true);
    view.setUint8(i * 8 + 2, rel(x.jt));
    view.setUint8(i * 8 + 3, rel(x.jf));
    view.setUint32(i * 8 + 4, x.k >>> 0, true);
  });
  return out;
}

/** Run the filter over one call, as the kernel would (for tests). */
export function runFilter(
  filter: Uint8Array,
  call: { arch: number; nr: number; args?: number[] },
): "allow" | "errno" | "enosys" | "kill" {
  const view = new DataView(filter.buffer, filter.byteOffset, filter.byteLength);
  const data = (off: number): number => {
    if (off === OFF_NR) return call.nr >>> 0;
    if (off === OFF_ARCH) return call.arch >>> 0;
    const i = (off - 16) / 8;
    return (call.args?.[i] ?? 0) >>> 0;
  };
  let acc = 0;
  for (let pc = 0; pc < filter.length / 8;) {
    const code = view.getUint16(pc * 8, true);
    const jt = view.getUint8(pc * 8 + 2);
    const jf = view.getUint8(pc * 8 + 3);
    const k = view.getUint32(pc * 8 + 4, true);
    if (code === LD_W_ABS) acc = data(k);
    else if (code === AND_K) acc = (acc & k) >>> 0;
    else if (code === JEQ_K) {
      pc += 1 + (acc === k ? jt : jf);
      continue;
    } else if (code === JGE_K) {
      pc += 1 + (acc >= k ? jt : jf);
      continue;
    } else if (code === JSET_K) {
      pc += 1 + ((acc & k) !== 0 ? jt : jf);
      continue;
    } else if (code === RET_K) {
      return k === RET_ALLOW ? "allow" : k === RET_ERRNO ? "errno" : k === RET_ENOSYS ? "enosys" : "kill";
    } else throw new Error(`unknown BPF opcode ${code}`);
    pc++;
  }
  throw new Error("the filter fell off its end");
}

export const SECCOMP = {
  AUDIT_ARCH,
  NR,
  IO_URING_SETUP,
  AF_INET,
  AF_INET6,
  SOCK_STREAM,
  MSG_FASTOPEN,
} as const;
