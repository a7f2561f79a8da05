/**
 * What the `hermit serve` that check started said on stderr (as `HERMIT_LOG_FORMAT=json` lines),
 * and what it means for the health rule: upstreams that could not be started, and the exported
 * tools each of them leaves unserved, are the problem ("mcp_servers.fs could not be started:
 * command not found: 'npx-typo' …; not served: read_file"); other warnings stay warnings. Pure.
 */
import { type LogEvent, parseLogLine } from "../log.ts";
import { exportSources } from "../manifest/names.ts";
import type { Manifest } from "../manifest/types.ts";
import type { Finding } from "./static.ts";

/** An upstream that could not be started, and why (its last reason). */
export interface UpstreamFailure {
  server: string;
  reason: string;
}

export class ServeLog {
  readonly #failures = new Map<string, string>();
  readonly #notServed = new Map<string, string>();
  readonly #warnings: string[] = [];
  readonly #tail: string[] = [];

  add(line: string): void {
    const parsed = parseLogLine(line);
    const text = parsed?.message ?? line;
    this.#tail.push(text);
    if (this.#tail.length > 20) this.#tail.shift();
    if (!parsed) return;
    const e: LogEvent | undefined = parsed.event;
    if (e?.kind === "upstream-failed") this.#failures.set(e.server, e.reason);
    else if (e?.kind === "not-served") this.#notServed.set(e.tool, e.why);
    // refusals are static findings already
    else if ((parsed.level === "warn" || parsed.level === "error") && !text.startsWith("refused:")) {
      this.#warnings.push(text);
    }
  }

  get failures(): UpstreamFailure[] {
    return [...this.#failures].map(([server, reason]) => ({ server, reason }));
  }
  get notServed(): ReadonlyMap<string, string> {
    return this.#notServed;
  }
  get warnings(): readonly string[] {
    return this.#warnings;
  }
  /** The last `n` lines as people read them. */
  tail(n: number): string[] {
    return this.#tail.slice(-n);
  }
}

/**
 * Findings for exported tools that are not served: each failed upstream with the tools it leaves
 * out is one problem (a failed upstream that leaves nothing out is a warning); a tool no failure
 * explains is a problem of its own, with the reason serve gave. A failure whose reason is one of
 * the `reported` findings (a server refused before the start) is not said again.
 */
/**
 * A server check refused before the start (cleartext credentials, a required sandbox), which serve
 * refused again: its start may word it with more detail (what else the sandbox lacks there).
 */
function refusedAbove(f: UpstreamFailure, reported: ReadonlySet<string>): boolean {
  const head = `refused: mcp_servers.${f.server}:`;
  return f.reason.startsWith(head) && [...reported].some((r) => r.startsWith(head));
}

export function missingToolFindings(
  m: Manifest,
  missing: readonly string[],
  failures: readonly UpstreamFailure[],
  notServed: ReadonlyMap<string, string> = new Map(),
  reported: ReadonlySet<string> = new Set(),
): Finding[] {
  const sources = exportSources(m);
  const explained = new Set<string>();
  const out: Finding[] = [];
  for (const f of failures) {
    const tools = missing.filter((t) =>
      (sources.get(t) ?? []).some((s) => s.kind === "upstream" && s.server === f.server)
    );
    for (const t of tools) explained.add(t);
    if (refusedAbove(f, reported)) {
      if (tools.length) {
        out.push({
          level: "problem",
          area: "health",
          message: `live: not served, as mcp_servers.${f.server} was refused (above): ${tools.join(", ")}`,
        });
      }
      continue;
    }
    out.push({
      level: tools.length ? "problem" : "warning",
      area: "health",
      message: `live: mcp_servers.${f.server} could not be started: ${f.reason}${
        tools.length ? `; not served: ${tools.join(", ")}` : ""
      }`,
    });
  }
  for (const t of missing.filter((t) => !explained.has(t))) {
    const why = notServed.get(t);
    out.push({
      level: "problem",
      area: "health",
      message: `live: exported but not served: ${t}${why ? ` (${why})` : ""}`,
    });
  }
  return out;
}
