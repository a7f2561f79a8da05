/**
 * The OAuth fixture (tests/fixtures/oauth/server.mjs: an authorization server and a protected MCP
 * server on loopback; access tokens live 3 s) for end-to-end tests: start it, switch it and read
 * its counters, and run `hermit login` against it with the test playing the browser.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { fixtures, hermitBin } from "./hermit.ts";
import { readUntil, type Reaper, waitFor } from "./procs.ts";

export type Fixture = Record<"mcp" | "sse" | "issuer" | "control", string>;

export async function startFixture(reaper: Reaper, more: string[] = []): Promise<Fixture> {
  const child = spawn("node", [path.join(fixtures, "oauth", "server.mjs"), "--ttl", "3", ...more], {
    stdio: "pipe",
  });
  reaper.track(child.pid);
  child.stderr.resume();
  const line = await readUntil(child.stdout, "\n", 20_000);
  return JSON.parse(line.slice(0, line.indexOf("\n")));
}

/** A browser that approves at once: fetch the authorization URL, return where it redirects. */
async function authorize(url: string): Promise<string> {
  const res = await fetch(url, { redirect: "manual" });
  await res.body?.cancel();
  assert.equal(res.status, 302, `the authorization server redirects (got ${res.status})`);
  return res.headers.get("location")!;
}

/** Run `hermit login`, and answer it: via the callback (a browser here), by pasting, or q. */
export async function login(
  dir: string,
  env: Record<string, string>,
  reaper: Reaper,
  answer: "browser" | "paste" | "cancel" | "mix-up" | "none",
  server = "remote",
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(hermitBin(), ["login", dir, server, "--timeout", answer === "none" ? "1" : "60"], {
    env,
    stdio: "pipe",
  });
  reaper.track(child.pid);
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  const url = await waitFor(() => /^ {2}(http\S+)$/m.exec(stderr)?.[1], {
    timeoutMs: 30_000,
    what: () => `the authorization URL from hermit login (stderr: ${stderr})`,
  });
  assert.match(stderr, /paste it here/, "a headless person is told to paste the answer back");
  if (answer === "cancel") child.stdin.write("q\n");
  else if (answer !== "none") {
    const location = await authorize(url); // the browser approves; where does it go?
    assert.match(location, /^http:\/\/127\.0\.0\.1:\d+\/callback\?/, "to hermit's loopback callback");
    if (answer === "paste") child.stdin.write(location + "\n");
    else {
      const page = await fetch(location);
      await page.text();
      if (answer === "browser") assert.equal(page.status, 200, "the callback takes the answer");
      else {
        assert.equal(page.status, 400, "an answer naming another issuer is not used");
        child.stdin.write("q\n");
      }
    }
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const code = await Promise.race([
    exited,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`hermit login did not exit; stderr: ${stderr}`)), 60_000);
    }),
  ]).finally(() => clearTimeout(timer));
  child.stdin.end();
  return { code, stdout, stderr };
}

/** POST `body` to the fixture's /control (its switches), or GET it; its switches and counters. */
export async function control(
  fx: Fixture,
  body?: Record<string, unknown>,
): Promise<Record<string, number | string | null>> {
  const post = {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  };
  return await (await fetch(fx.control, body ? post : {})).json() as Record<string, number | string | null>;
}

export type Play = (url: string, redirect: string, answer: (line: string) => void) => Promise<void>;

/** Run `hermit login`; once it prints the authorization URL, `play` answers it (unless it exits first). */
export async function loginPlaying(
  dir: string,
  env: Record<string, string>,
  reaper: Reaper,
  play: Play,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(hermitBin(), ["login", dir, "remote", "--timeout", "60"], { env, stdio: "pipe" });
  reaper.track(child.pid);
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
  let exited = false;
  const code = new Promise<number | null>((r) => child.on("close", (c) => (exited = true, r(c))));
  const url = await waitFor(() => exited ? "exited" : /^ {2}(http\S+)$/m.exec(stderr)?.[1], {
    timeoutMs: 30_000,
    what: () => `the authorization URL (stderr: ${stderr})`,
  });
  if (url !== "exited") {
    await play(url, new URL(url).searchParams.get("redirect_uri")!, (line) => child.stdin.write(line));
  }
  const result = { code: await code, stdout, stderr };
  child.stdin.end();
  return result;
}
