/**
 * The egress proxy: the destination checks purely, then the real proxy on loopback with real
 * destination servers: a listed destination is reached through CONNECT and through a plain HTTP
 * request (re-written to origin form, `Connection: close`); an unlisted one gets 403, is logged,
 * and its server never sees a connection. A listed name that resolves into the host (loopback,
 * link-local, unspecified; a wildcard's subdomain whose DNS someone else runs) is refused unless
 * the entry names the address or `localhost`, and the proxy connects to the address it checked.
 * These use a resolver given to the proxy (names like evil.example.test cannot resolve offline);
 * hermit's proxy uses dns.lookup, as the `localhost` case here does.
 */
import assert from "node:assert/strict";
import http from "node:http";
import dns from "node:dns";
import net from "node:net";
import os from "node:os";
import { after, before, describe, it } from "node:test";
import { internalAddress } from "../../../src/sandbox/internal_address.ts";
import { allowedDestination, EgressProxy, originHead, requestTarget } from "../../../src/sandbox/proxy.ts";

// a root file system without /etc/hosts (a bare debootstrap) cannot resolve localhost at all
const localhostResolves = await dns.promises.lookup("localhost").then(() => true, () => false);

/** Send `text` to the proxy on `port`, return everything it answers until it closes (or `until` shows). */
function talkTo(port: number, text: string, until?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, "127.0.0.1");
    let got = "";
    s.setEncoding("utf8");
    s.on("data", (d) => {
      got += d;
      if (until && got.includes(until)) (s.destroy(), resolve(got));
    });
    s.on("close", () => resolve(got));
    s.on("error", reject);
    s.setTimeout(10_000, () => (s.destroy(), reject(new Error(`the proxy did not answer: ${got}`))));
    s.write(text);
  });
}

describe("destination checks", () => {
  const allow = [{ host: "api.example.com", port: 443 }, { host: "*.npmjs.org", port: 443 }, {
    host: "::1",
    port: 80,
  }];

  it("a host and port listed, a subdomain of a wildcard, an IPv6 literal", () => {
    assert.ok(allowedDestination(allow, "API.example.com", 443));
    assert.ok(allowedDestination(allow, "api.example.com.", 443));
    assert.ok(allowedDestination(allow, "registry.npmjs.org", 443));
    assert.ok(allowedDestination(allow, "[::1]", 80));
  });

  it("nothing else: another port, the wildcard's own domain, a longer name", () => {
    assert.ok(!allowedDestination(allow, "api.example.com", 80));
    assert.ok(!allowedDestination(allow, "npmjs.org", 443));
    assert.ok(!allowedDestination(allow, "api.example.com.evil.io", 443));
    assert.ok(!allowedDestination(allow, "evilnpmjs.org", 443));
  });

  it("reads CONNECT and absolute-form requests; refuses the rest", () => {
    assert.deepEqual(requestTarget("CONNECT api.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n"), {
      kind: "connect",
      host: "api.example.com",
      port: 443,
    });
    assert.deepEqual(requestTarget("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n"), {
      kind: "connect",
      host: "::1",
      port: 8443,
    });
    assert.deepEqual(requestTarget("GET http://h.example:8080/a?b=1 HTTP/1.1\r\n\r\n"), {
      kind: "http",
      host: "h.example",
      port: 8080,
      path: "/a?b=1",
    });
    assert.equal(requestTarget("GET /relative HTTP/1.1\r\n\r\n"), undefined);
    assert.equal(requestTarget("GET https://h/ HTTP/1.1\r\n\r\n"), undefined);
    assert.equal(requestTarget("CONNECT nohost HTTP/1.1\r\n\r\n"), undefined);
  });

  it("a CONNECT host must be a host name or an IP literal, its port 1-65535", () => {
    // a NUL ends the name for getaddrinfo under Node (evil.io is what it resolves), throws under Deno
    assert.equal(requestTarget("CONNECT evil.io\0.example.com:443 HTTP/1.1\r\n\r\n"), undefined);
    assert.equal(requestTarget("CONNECT evil.io%00.example.com:443 HTTP/1.1\r\n\r\n"), undefined);
    assert.equal(requestTarget("CONNECT ex\u00e4mple.com:443 HTTP/1.1\r\n\r\n"), undefined);
    assert.equal(requestTarget("CONNECT api.example.com:99999 HTTP/1.1\r\n\r\n"), undefined);
    assert.equal(requestTarget("CONNECT api.example.com:0 HTTP/1.1\r\n\r\n"), undefined);
    assert.deepEqual(requestTarget("CONNECT my_host-1.example.com:65535 HTTP/1.1\r\n\r\n"), {
      kind: "connect",
      host: "my_host-1.example.com",
      port: 65535,
    });
  });

  it("re-writes the first request for the origin", () => {
    assert.equal(
      originHead(
        "GET http://h/x HTTP/1.1\r\nHost: h\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive\r\n\r\n",
        "/x",
      ),
      "GET /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
    );
  });
});

describe("the proxy on loopback", () => {
  let echo: net.Server;
  let other: net.Server;
  let web: http.Server;
  let otherConnections = 0;
  let proxy: EgressProxy;
  const denied: string[] = [];
  const portOf = (s: net.Server | http.Server) => (s.address() as net.AddressInfo).port;
  const listen = (s: net.Server | http.Server) =>
    new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));

  before(async () => {
    echo = net.createServer((s) => s.pipe(s));
    other = net.createServer((s) => (otherConnections++, s.end("leak")));
    web = http.createServer((req, res) => res.end(`${req.method} ${req.url} ${req.headers.connection}`));
    await Promise.all([listen(echo), listen(other), listen(web)]);
    proxy = new EgressProxy(
      [
        { host: "127.0.0.1", port: portOf(echo) },
        { host: "127.0.0.1", port: portOf(web) },
        { host: "*.example.test", port: portOf(echo) },
      ],
      (d) => denied.push(d),
    );
    await proxy.listen();
  });
  after(async () => {
    await proxy.close();
    for (const s of [echo, other, web]) await new Promise((r) => s.close(r));
  });

  const talk = (text: string, until?: string) => talkTo(proxy.port, text, until);

  it("tunnels CONNECT to a listed destination", async () => {
    const got = await talk(`CONNECT 127.0.0.1:${portOf(echo)} HTTP/1.1\r\n\r\nping-through`, "ping-through");
    assert.match(got, /^HTTP\/1\.1 200 Connection Established\r\n\r\nping-through$/);
  });

  it("forwards a plain HTTP request in origin form, closing after it", async () => {
    const got = await talk(
      `GET http://127.0.0.1:${portOf(web)}/hello?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
    );
    assert.match(got, /^HTTP\/1\.1 200 OK/);
    assert.match(got, /GET \/hello\?x=1 close$/);
  });

  it("a name with a NUL under a listed wildcard gets 400, and the proxy goes on serving", async () => {
    // Deno's net.connect threw at such a name, inside the proxy's data handler: hermit exited
    const got = await talk(`CONNECT 127.0.0.1\0.example.test:${portOf(echo)} HTTP/1.1\r\n\r\n`);
    assert.match(got, /^HTTP\/1\.1 400 Bad Request/);
    const next = await talk(`CONNECT 127.0.0.1:${portOf(echo)} HTTP/1.1\r\n\r\nstill-here`, "still-here");
    assert.match(next, /^HTTP\/1\.1 200 Connection Established/);
  });

  it("refuses an unlisted destination with 403; its server never sees a connection", async () => {
    const got = await talk(`CONNECT 127.0.0.1:${portOf(other)} HTTP/1.1\r\n\r\n`);
    assert.match(got, /^HTTP\/1\.1 403 Forbidden/);
    assert.match(got, /is not in this server's sandbox\.network/);
    const plain = await talk(`GET http://127.0.0.1:${portOf(other)}/ HTTP/1.1\r\n\r\n`);
    assert.match(plain, /^HTTP\/1\.1 403 Forbidden/);
    assert.equal(otherConnections, 0);
    assert.deepEqual(denied, [`127.0.0.1:${portOf(other)}`, `127.0.0.1:${portOf(other)}`]);
  });
});

describe("host-internal addresses", () => {
  it("loopback, link-local and unspecified, IPv4 and IPv6, an IPv4 inside an IPv6 one too", () => {
    for (
      const a of ["127.0.0.1", "127.1.2.3", "::1", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1", "::ffff:7f00:1"]
    ) {
      assert.equal(internalAddress(a), "loopback", a);
    }
    for (const a of ["169.254.169.254", "fe80::1", "fe80::1%eth0", "febf::1", "::ffff:169.254.169.254"]) {
      assert.equal(internalAddress(a), "link-local", a);
    }
    for (const a of ["0.0.0.0", "::", "::ffff:0.0.0.0", "0.1.2.3"]) {
      assert.equal(internalAddress(a), "unspecified", a);
    }
    // the instance-metadata services outside link-local: Alibaba Cloud's, and AWS's over IPv6
    for (
      const a of ["100.100.100.200", "::ffff:100.100.100.200", "fd00:ec2::254", "FD00:EC2:0:0:0:0:0:254"]
    ) {
      assert.equal(internalAddress(a), "cloud metadata", a);
    }
    for (
      const a of [
        "93.184.216.34",
        "10.0.0.1",
        "2606:4700::1111",
        "::ffff:93.184.216.34",
        "fec0::1",
        "100.100.100.201",
        "100.64.0.1",
        "fd00:ec2::253",
        "example.com",
      ]
    ) {
      assert.equal(internalAddress(a), undefined, a);
    }
  });
});

describe("the proxy resolving a listed name", () => {
  let inner: net.Server;
  let echo: net.Server;
  let innerConnections = 0;
  let proxy: EgressProxy;
  const denied: string[] = [];
  const asked: string[] = [];
  /** A non-loopback address of this machine, when it has one (the rebinding case needs it). */
  const own = Object.values(os.networkInterfaces()).flat().find((i) =>
    i && !i.internal && i.family === "IPv4"
  )
    ?.address;
  const answers: Record<string, string[][]> = {
    "evil.example.test": [["127.0.0.1"]],
    "meta.example.test": [["169.254.169.254"]],
    "mapped.example.test": [["::ffff:127.0.0.1"]],
    "zero.example.test": [["0.0.0.0"]],
    "alibaba.example.test": [["100.100.100.200"]],
    "imds6.example.test": [["fd00:ec2::254"]],
    "rebind.example.test": [[own ?? "192.0.2.1"], ["127.0.0.1"]],
  };
  const portOf = (s: net.Server) => (s.address() as net.AddressInfo).port;

  before(async () => {
    inner = net.createServer((s) => (innerConnections++, s.end("leak")));
    echo = net.createServer((s) => s.pipe(s));
    await new Promise<void>((r) => inner.listen(0, "127.0.0.1", () => r()));
    await new Promise<void>((r) => echo.listen(0, "0.0.0.0", () => r()));
    proxy = new EgressProxy(
      [
        { host: "*.example.test", port: portOf(inner) },
        { host: "*.example.test", port: portOf(echo) },
        { host: "localhost", port: portOf(echo) },
      ],
      (d, why) => denied.push(`${d} ${why}`),
      (host) => {
        asked.push(host);
        const given = answers[host];
        if (!given) return dns.promises.lookup(host, { all: true, verbatim: true });
        return Promise.resolve(
          (given.length > 1 ? given.shift()! : given[0]).map((address) => ({ address })),
        );
      },
    );
    await proxy.listen();
  });
  after(async () => {
    await proxy.close();
    for (const s of [inner, echo]) await new Promise((r) => s.close(r));
  });

  const talk = (text: string, until?: string) => talkTo(proxy.port, text, until);

  it("a wildcard's name resolving to loopback, link-local, unspecified or cloud metadata gets 403; nothing is reached", async () => {
    const port = portOf(inner);
    const cases = [
      ["evil", "127.0.0.1 (loopback)"],
      ["meta", "169.254.169.254 (link-local)"],
      ["mapped", "::ffff:127.0.0.1 (loopback)"],
      ["zero", "0.0.0.0 (unspecified)"],
      ["alibaba", "100.100.100.200 (cloud metadata)"],
      ["imds6", "fd00:ec2::254 (cloud metadata)"],
    ];
    for (const [name, what] of cases) {
      const got = await talk(`CONNECT ${name}.example.test:${port} HTTP/1.1\r\n\r\n`);
      assert.match(got, /^HTTP\/1\.1 403 Forbidden/, name);
      assert.ok(got.includes(`it resolves to ${what}; only an entry naming that address`), got);
    }
    const plain = await talk(`GET http://evil.example.test:${port}/ HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.match(plain, /^HTTP\/1\.1 403 Forbidden/);
    assert.equal(innerConnections, 0);
    assert.match(
      denied[0],
      /^evil\.example\.test:\d+ it resolves to 127\.0\.0\.1 \(loopback\); only an entry naming/,
    );
  });

  it("an entry naming localhost reaches it (resolved by the system)", {
    skip: localhostResolves ? false : "this machine's resolver does not know localhost (no /etc/hosts entry)",
  }, async () => {
    const got = await talk(
      `CONNECT localhost:${portOf(echo)} HTTP/1.1\r\n\r\nvia-localhost`,
      "via-localhost",
    );
    assert.match(got, /^HTTP\/1\.1 200 Connection Established\r\n\r\nvia-localhost$/);
  });

  it("connects to the address it checked: a name is resolved once, a rebinding answer is never used", {
    skip: own ? false : "no non-loopback IPv4 address on this machine",
  }, async () => {
    const before = asked.filter((h) => h === "rebind.example.test").length;
    const got = await talk(`CONNECT rebind.example.test:${portOf(echo)} HTTP/1.1\r\n\r\nrebound`, "rebound");
    assert.match(got, /^HTTP\/1\.1 200 Connection Established\r\n\r\nrebound$/);
    assert.equal(asked.filter((h) => h === "rebind.example.test").length, before + 1, "resolved once");
  });
});
