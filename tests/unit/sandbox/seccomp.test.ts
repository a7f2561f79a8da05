/**
 * The seccomp filter, run over calls the way the kernel runs it (a BPF interpreter in the
 * module): native inet sockets refused or reduced to TCP streams, TCP Fast Open sends and
 * listen() refused for a destination list, io_uring refused, x32 and foreign-architecture calls
 * killed, everything else allowed. The kernel's own verdict is checked end to end in
 * tests/e2e/sandbox*.test.ts.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runFilter, SECCOMP, seccompFilter } from "../../../src/sandbox/seccomp.ts";

const AF_UNIX = 1;
const AF_NETLINK = 16;
const SOCK_DGRAM = 2;
const SOCK_RAW = 3;
const SOCK_NONBLOCK = 0o4000;
const SOCK_CLOEXEC = 0o2000000;
const IPPROTO_SCTP = 132;
const MSG_FASTOPEN = 0x20000000;
const MSG_DONTWAIT = 0x40;
const MSG_NOSIGNAL = 0x4000;
/** The send calls' numbers, written out here so the module's own table is checked too. */
const SEND = {
  x64: { sendto: 44, sendmsg: 46, sendmmsg: 307 },
  arm64: { sendto: 206, sendmsg: 211, sendmmsg: 269 },
} as const;

for (const arch of ["x64", "arm64"] as const) {
  const native = SECCOMP.AUDIT_ARCH[arch];
  const socket = SECCOMP.NR[arch].socket;
  const call = (nr: number, args: number[] = [], a: number = native) => ({ arch: a, nr, args });

  describe(`seccomp on ${arch}`, () => {
    const none = seccompFilter(arch, "none");
    const tcp = seccompFilter(arch, "tcp-only");

    it("network none: refuses every IPv4 and IPv6 socket, allows Unix and netlink ones", () => {
      for (const type of [SECCOMP.SOCK_STREAM, SOCK_DGRAM, SOCK_RAW]) {
        assert.equal(runFilter(none, call(socket, [SECCOMP.AF_INET, type])), "errno");
        assert.equal(runFilter(none, call(socket, [SECCOMP.AF_INET6, type])), "errno");
      }
      assert.equal(runFilter(none, call(socket, [AF_UNIX, SECCOMP.SOCK_STREAM])), "allow");
      assert.equal(runFilter(none, call(socket, [AF_NETLINK, SOCK_DGRAM])), "allow");
    });

    it("a destination list: TCP streams only (flags aside), no UDP, raw or SCTP", () => {
      for (const family of [SECCOMP.AF_INET, SECCOMP.AF_INET6]) {
        assert.equal(runFilter(tcp, call(socket, [family, SECCOMP.SOCK_STREAM, 0])), "allow");
        assert.equal(
          runFilter(tcp, call(socket, [family, SECCOMP.SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 6])),
          "allow",
        );
        assert.equal(runFilter(tcp, call(socket, [family, SOCK_DGRAM, 0])), "errno");
        assert.equal(runFilter(tcp, call(socket, [family, SOCK_DGRAM | SOCK_CLOEXEC, 17])), "errno");
        assert.equal(runFilter(tcp, call(socket, [family, SOCK_RAW, 1])), "errno");
        assert.equal(runFilter(tcp, call(socket, [family, SECCOMP.SOCK_STREAM, IPPROTO_SCTP])), "errno");
      }
      assert.equal(runFilter(tcp, call(socket, [AF_UNIX, SOCK_DGRAM])), "allow");
    });

    it("a destination list: no send with MSG_FASTOPEN (its implicit connect skips Landlock's check)", () => {
      const { sendto, sendmsg, sendmmsg } = SEND[arch];
      // sendto(fd, buf, len, flags, addr, addrlen); sendmsg(fd, msg, flags); sendmmsg(fd, vec, n, flags)
      const withFlags = (flags: number) => [
        call(sendto, [3, 0, 10, flags, 0, 16]),
        call(sendmsg, [3, 0, flags]),
        call(sendmmsg, [3, 0, 1, flags]),
      ];
      for (const c of withFlags(MSG_FASTOPEN)) assert.equal(runFilter(tcp, c), "errno", `nr ${c.nr}`);
      for (const c of withFlags(MSG_FASTOPEN | MSG_NOSIGNAL | MSG_DONTWAIT)) {
        assert.equal(runFilter(tcp, c), "errno", `nr ${c.nr} with more flags`);
      }
      for (const flags of [0, MSG_NOSIGNAL, MSG_DONTWAIT | MSG_NOSIGNAL]) {
        for (const c of withFlags(flags)) {
          assert.equal(runFilter(tcp, c), "allow", `nr ${c.nr} flags ${flags}`);
        }
      }
    });

    it("a destination list: no listen() (it binds an unbound TCP socket to a random port itself)", () => {
      const listen = arch === "x64" ? 50 : 201;
      assert.equal(runFilter(tcp, call(listen, [3, 128])), "errno");
      // network none has no inet socket to listen on (seccomp) or its own loopback (a namespace)
      assert.equal(runFilter(none, call(listen, [3, 128])), "allow");
    });

    it("refuses the kernel's key management with ENOSYS on every network (the user's keyrings)", () => {
      const keys = arch === "x64" ? [248, 249, 250] : [217, 218, 219]; // add_key, request_key, keyctl
      for (const f of [none, tcp, seccompFilter(arch, "all")]) {
        for (const nr of keys) assert.equal(runFilter(f, call(nr, [0])), "enosys", `nr ${nr}`);
      }
    });

    it("with the network open, checks nothing else: sockets, io_uring, another architecture pass", () => {
      const all = seccompFilter(arch, "all");
      const other = arch === "x64" ? 0x40000003 /* i386 */ : 0x40000028 /* arm */;
      assert.equal(runFilter(all, call(socket, [SECCOMP.AF_INET, SOCK_DGRAM])), "allow");
      assert.equal(runFilter(all, call(SECCOMP.IO_URING_SETUP, [8, 0])), "allow");
      assert.equal(runFilter(all, call(0, [], other)), "allow");
      for (const nr of [0, 1, 3, 59, 221, 257, 435]) {
        assert.equal(runFilter(all, call(nr)), "allow", `nr ${nr}`);
      }
    });

    it("refuses io_uring (it opens sockets without the socket call)", () => {
      for (const f of [none, tcp]) assert.equal(runFilter(f, call(SECCOMP.IO_URING_SETUP, [8, 0])), "errno");
    });

    it("kills calls of another architecture (32-bit compat) and lets ordinary calls through", () => {
      const other = arch === "x64" ? 0x40000003 /* i386 */ : 0x40000028 /* arm */;
      for (const f of [none, tcp]) {
        assert.equal(runFilter(f, call(socket, [SECCOMP.AF_INET, 1], other)), "kill");
        assert.equal(runFilter(f, call(0, [], other)), "kill");
        for (const nr of [0, 1, 3, 59, 221, 257, 435]) {
          assert.equal(runFilter(f, call(nr)), "allow", `nr ${nr}`);
        }
      }
    });

    if (arch === "x64") {
      it("kills x32 calls", () => {
        assert.equal(runFilter(none, call(0x40000000 | 41, [SECCOMP.AF_INET, 1])), "kill");
        assert.equal(runFilter(tcp, call(0x40000000 | 1)), "kill");
      });
    }
  });
}
