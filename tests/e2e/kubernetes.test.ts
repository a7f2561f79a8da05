/**
 * `deploy/kubernetes.yaml` against what it says of hermit, field by field, with a real service
 * (no cluster here: nothing is checked against a kubelet). The container runs the Dockerfile's
 * command with its token file where the Secret is mounted, on the port the probes and the Service
 * name; each probe, sent as a kubelet sends it (Host: the pod's address), succeeds or fails as
 * declared while the upstreams start, while serving and while draining (so a draining pod leaves
 * the Service without being killed); and the grace period covers the drain bound the service
 * reports plus stopping its upstreams.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { parseAllDocuments } from "yaml";
import { loadManifest } from "../../src/manifest/load.ts";
import { DEFAULT_GRACE_MS } from "../../src/process/group.ts";
import { LINGER_MS } from "../../src/service/drain.ts";
import { examples, fixtures, root } from "../helpers/hermit.ts";
import { cmdline, descendants, Reaper, waitFor } from "../helpers/procs.ts";
import { rawRequest } from "../helpers/raw_http.ts";
import { connectHttp, freePort, launchHermit, writeServiceAdapter } from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";

// deno-lint-ignore no-explicit-any
type Doc = any;
const docs: Doc[] = parseAllDocuments(readFileSync(path.join(root, "deploy", "kubernetes.yaml"), "utf8")).map(
  (
    d,
  ) => d.toJS(),
);
const kind = (k: string) => docs.find((d) => d.kind === k);
const secret = kind("Secret");
const deployment = kind("Deployment");
const service = kind("Service");
const pod = deployment.spec.template.spec;
const container = pod.containers[0];
const args: string[] = container.args;
const argOf = (flag: string) => args[args.indexOf(flag) + 1];
const cmd: string[] = JSON.parse(
  /^CMD (\[.*\])$/m.exec(readFileSync(path.join(root, "Dockerfile"), "utf8"))![1],
);

/** What a kubelet's httpGet probe gets: success is a status from 200 to 399. */
async function probe(port: number, p: { path: string }): Promise<{ ok: boolean; status: number }> {
  const r = await rawRequest(
    port,
    `GET ${p.path} HTTP/1.1\r\nhost: 10.1.2.3:${port}\r\nuser-agent: kube-probe/1.30`,
  );
  return { ok: r.status >= 200 && r.status < 400, status: r.status };
}

describe("deploy/kubernetes.yaml", () => {
  it("runs the Dockerfile's command, its token file where the Secret is mounted, on the port probes and Service use", () => {
    assert.deepEqual(args, cmd, "the container's args are the image's CMD");
    const tokenFile = argOf("--token-file");
    const mount = container.volumeMounts.find((m: Doc) => tokenFile.startsWith(m.mountPath + "/"));
    const volume = pod.volumes.find((v: Doc) => v.name === mount.name);
    assert.equal(volume.secret.secretName, secret.metadata.name);
    const item = volume.secret.items.find((i: Doc) => path.posix.join(mount.mountPath, i.path) === tokenFile);
    assert.ok(item, `the Secret provides ${tokenFile}`);
    assert.ok(
      String(secret.stringData[item.key]).length >= 16,
      "a token hermit accepts (16 characters or more)",
    );
    assert.ok(mount.readOnly);
    // the service runs as the image's non-root user, who can read the token through fsGroup
    assert.equal(pod.securityContext.runAsUser, 10001);
    assert.equal(pod.securityContext.fsGroup, 10001);
    assert.equal(volume.secret.defaultMode & 0o040, 0o040);
    const port = container.ports.find((p: Doc) => p.name === "mcp");
    assert.equal(String(port.containerPort), argOf("--port"));
    for (const p of ["startupProbe", "livenessProbe", "readinessProbe"]) {
      assert.equal(container[p].httpGet.port, "mcp");
    }
    assert.equal(service.spec.ports[0].targetPort, "mcp");
    assert.deepEqual(service.spec.selector, deployment.spec.template.metadata.labels);
    assert.equal(argOf("--host"), "0.0.0.0", "reachable from the pod's address");
  });

  describe("the probes against a service run as the Deployment runs it", () => {
    const tmp = tempDir("hermit-k8s-");
    const reaper = new Reaper();
    let svc: ReturnType<typeof launchHermit>;
    let port = 0;

    before(async () => {
      // the adapter: an upstream that takes a few seconds to start, and a slow command tool
      const adapter = path.join(tmp.path, "adapter");
      writeServiceAdapter(
        adapter,
        "probed",
        `exports: { tools: [echo, slow] }
mcp_servers:
  scripted:
    command: node
    args: [${JSON.stringify(path.join(fixtures, "servers", "scripted.mjs"))}]
    env: { START_DELAY_MS: "4000" }
tools:
  slow: { description: waits, run: [sleep, "3"], timeout: 30 }
`,
      );
      const tokenFile = path.join(tmp.path, "hermit_token");
      writeFileSync(tokenFile, secret.stringData.hermit_token, { mode: 0o400 });
      port = await freePort();
      const run = args.map((a) =>
        a === "/adapter"
          ? adapter
          : a === argOf("--token-file")
          ? tokenFile
          : a === argOf("--port")
          ? String(port)
          : a
      );
      svc = launchHermit(run, reaper);
    });
    after(async () => {
      await reaper.reap();
      tmp.cleanup();
    });

    it("while the upstreams start: startup and liveness succeed, readiness fails", async () => {
      const live = await waitFor(() => probe(port, container.startupProbe.httpGet).catch(() => undefined), {
        timeoutMs: 30_000,
        what: () => `the service to listen (stderr: ${svc.stderr()})`,
      });
      assert.ok(live.ok);
      assert.ok((await probe(port, container.livenessProbe.httpGet)).ok);
      const ready = await probe(port, container.readinessProbe.httpGet);
      assert.equal(ready.ok, false, "not ready while starting");
      assert.equal(ready.status, 503);
    });

    it("serving: every probe succeeds", async () => {
      await waitFor(async () => (await probe(port, container.readinessProbe.httpGet)).ok, {
        timeoutMs: 60_000,
        what: "readiness once the upstreams are up",
      });
      assert.ok((await probe(port, container.livenessProbe.httpGet)).ok);
    });

    it("the grace period covers the drain bound the service reports, plus stopping its upstreams", async () => {
      const health = await (await fetch(`http://127.0.0.1:${port}/health`, {
        headers: { authorization: `Bearer ${secret.stringData.hermit_token}` },
      })).json();
      // the image's default adapter runs with the same bound as this one unless it sets its own
      assert.equal(health.drain_seconds, loadManifest(path.join(examples, "team-memory")).serve.drainSeconds);
      const stopMs = health.drain_seconds * 1000 + LINGER_MS + 2 * DEFAULT_GRACE_MS;
      assert.ok(
        stopMs + 2000 <= pod.terminationGracePeriodSeconds * 1000,
        `drain ${health.drain_seconds} s + linger + upstream stop must fit in ${pod.terminationGracePeriodSeconds} s`,
      );
    });

    it("draining (SIGTERM, a call in flight): readiness fails, liveness still succeeds; exit 0", async () => {
      const client = await connectHttp({
        url: `http://127.0.0.1:${port}/mcp`,
        token: secret.stringData.hermit_token,
      });
      const call = client.callTool({ name: "slow", arguments: {} });
      await waitFor(() => descendants(svc.pid).some((p) => /(^|\/)sleep 3$/.test(cmdline(p))), {
        timeoutMs: 20_000,
        what: "the slow call to run",
      });
      process.kill(svc.pid, "SIGTERM");
      await waitFor(async () => !(await probe(port, container.readinessProbe.httpGet)).ok, {
        timeoutMs: 10_000,
        what: "readiness to fail while draining",
      });
      assert.ok((await probe(port, container.livenessProbe.httpGet)).ok, "a draining pod is not killed");
      assert.equal((await call).isError, undefined);
      assert.equal(await svc.exited, 0, svc.stderr());
      await client.close().catch(() => {});
    });
  });
});
