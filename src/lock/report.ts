/**
 * How a lock run reads: what changed since the last lock (servers and tools added, removed or
 * changed, each changed definition as a diff, each added one in full), the description-scan
 * findings in the new text, and the outcome line. One text for people, one object for scripts;
 * upstream text in it (a server's serverInfo, why it did not start) with hidden and control
 * characters escaped. Pure.
 */
import { escapeUnseen } from "../gates/approval_text.ts";
import type { Manifest } from "../manifest/types.ts";
import { exportedName } from "../manifest/names.ts";
import { own } from "../platform/own.ts";
import { isEmpty, type ToolChange } from "./build.ts";
import { definitionDiff, definitionLines } from "./diff.ts";
import type { LockRun } from "./run.ts";

export type LockOutcome = "written" | "up-to-date" | "out-of-date" | "failed";

export function lockOutcome(run: LockRun, check: boolean): LockOutcome {
  if (run.failures.length) return "failed";
  if (isEmpty(run.changes) && run.previous.kind === "ok") return "up-to-date";
  return check ? "out-of-date" : "written";
}

/** `name (mcp_servers.s)`, or `name (mcp_servers.s 'raw')` when renamed. */
export function toolLabel(m: Manifest, server: string, raw: string): string {
  const u = own(m.upstreams, server);
  const exported = u ? exportedName(raw, u) : raw;
  return `${exported} (mcp_servers.${server}${exported !== raw ? ` '${raw}'` : ""})`;
}

/** The diff lines of one tool change, unindented. */
export function changeLines(c: ToolChange): string[] {
  if (c.kind === "changed") return definitionDiff(c.before!, c.after!);
  if (c.kind === "added") return definitionLines(c.after!);
  return [];
}

export function renderLockRun(m: Manifest, run: LockRun, outcome: LockOutcome, shownDir: string): string {
  const lines = [`hermit lock: ${m.name}`];
  if (run.previous.kind === "invalid") {
    lines.push(`  the old hermit.lock could not be used (${run.previous.why})`);
  }
  const mark = { added: "+", removed: "-", changed: "~" } as const;
  if (run.changes.servers.length) {
    lines.push("servers:");
    for (const s of run.changes.servers) {
      lines.push(
        `  ${mark[s.kind]} mcp_servers.${s.server}${
          s.details.length ? ": " + escapeUnseen(s.details.join("; ")) : ""
        }`,
      );
    }
  }
  if (run.changes.tools.length) {
    lines.push("tools:");
    for (const c of run.changes.tools) {
      lines.push(`  ${mark[c.kind]} ${toolLabel(m, c.server, c.raw)} ${c.kind}`);
      for (const l of changeLines(c)) lines.push(`      ${l}`);
    }
  }
  if (run.findings.length) {
    lines.push("description-scan findings in the new text (read them before you accept it):");
    for (const { server, finding: f } of run.findings) {
      lines.push(`  mcp_servers.${server} ${f.where}: ${f.rule}: "${f.excerpt}"`);
    }
  }
  for (const f of run.failures) {
    lines.push(`  problem: mcp_servers.${f.server} did not start: ${escapeUnseen(f.why)}`);
  }
  for (const n of run.notes) lines.push(`  note: ${n}`);
  const servers = Object.keys(run.next.servers).length;
  const tools = Object.values(run.next.servers).reduce((n, s) => n + Object.keys(s.tools).length, 0);
  const count = `${plural(servers, "server")}, ${plural(tools, "tool")}`;
  lines.push(
    {
      "written": `wrote hermit.lock (${count}); review the diff and commit it with hermit.yaml`,
      "up-to-date": `hermit.lock is up to date (${count})`,
      "out-of-date": `hermit.lock is out of date; accept the changes above with 'hermit lock ${shownDir}'`,
      "failed": "nothing written: every enabled server must start to be locked",
    }[outcome],
  );
  return lines.join("\n") + "\n";
}

export function lockRunJson(m: Manifest, run: LockRun, outcome: LockOutcome) {
  return {
    adapter: m.name,
    outcome,
    servers: run.changes.servers,
    tools: run.changes.tools.map((c) => ({
      ...c,
      tool: toolLabel(m, c.server, c.raw),
      diff: changeLines(c),
    })),
    findings: run.findings.map(({ server, finding }) => ({ server, ...finding })),
    failures: run.failures,
    notes: run.notes,
  };
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
