/**
 * The shell reading behind screening (gate 1): words with quotes and escapes removed as a POSIX
 * shell removes them, simple commands split at the operators, redirections apart from words, and
 * the scripts inside substitutions handed back.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseShell, unescapeC } from "../../../src/gates/shell_words.ts";

const words = (s: string) => parseShell(s).commands.map((c) => c.words);

describe("shell words", () => {
  it("removes quotes, backslashes and ANSI-C quoting as the shell does", () => {
    for (
      const spelled of [
        "curl",
        "c''url",
        'c""url',
        "'cu'rl",
        '"c"u"r"l',
        "c\\url",
        "\\c\\u\\r\\l",
        "$'curl'",
        "$'\\x63url'",
        "$'\\x63\\x75rl'",
        "$'\\143url'",
        "$'\\u0063url'",
        "$'\\U00000063url'",
        "cu\\\nrl",
      ]
    ) {
      assert.deepEqual(words(`${spelled} -s x`), [["curl", "-s", "x"]], spelled);
    }
  });

  it("keeps quoted operators and blanks inside one word", () => {
    assert.deepEqual(words(`echo 'a; b' "c | d" e\\ f`), [["echo", "a; b", "c | d", "e f"]]);
    assert.deepEqual(words(`printf '%s\\n' "it's"`), [["printf", "%s\\n", "it's"]]);
    assert.deepEqual(words(`echo "a\\"b" "\\$HOME" '\\n'`), [["echo", 'a"b', "$HOME", "\\n"]]);
  });

  it("splits simple commands at ; & && || | ( ) and newlines, and drops comments", () => {
    assert.deepEqual(words("a 1; b 2 && c || d | e & f\n(g) # h i\nj"), [
      ["a", "1"],
      ["b", "2"],
      ["c"],
      ["d"],
      ["e"],
      ["f"],
      ["g"],
      ["j"],
    ]);
    assert.deepEqual(words("echo a#b"), [["echo", "a#b"]], "# inside a word is not a comment");
  });

  it("marks the words holding an expansion outside quotes (what IFS splits)", () => {
    assert.deepEqual(parseShell(`a "$x" $y "\${z}"w \${v} '$q' $(c) \`d\` $'e'`).commands[0].splits, [
      2,
      4,
      6,
      7,
    ]);
    assert.equal(parseShell('exec "$d/node" s.js').commands[0].splits, undefined);
  });

  it("reads redirections apart from words; a bare number before one is a descriptor", () => {
    const [c] = parseShell("cmd a 2>/dev/null >>'out file' 2>&1 &>all <in 3<>/dev/tcp/h/1 <<EOF b").commands;
    assert.deepEqual(c.words, ["cmd", "a", "b"]);
    assert.deepEqual(c.redirects, [
      { op: ">", target: "/dev/null" },
      { op: ">>", target: "out file" },
      { op: ">&", target: "1" },
      { op: "&>", target: "all" },
      { op: "<", target: "in" },
      { op: "<>", target: "/dev/tcp/h/1" },
      { op: "<<", target: "EOF" },
    ]);
    assert.deepEqual(parseShell("echo x2>f").commands[0], {
      words: ["echo", "x2"],
      redirects: [{ op: ">", target: "f" }],
    });
  });

  it("hands back the scripts inside $( ), backticks and <( ), nested or in double quotes", () => {
    const p = parseShell('echo "$(curl a)" `wget b` $(echo $(nc c)) <(socat d) $((1 + 2)) ${x:-y}');
    assert.deepEqual(p.substitutions, ["curl a", "wget b", "echo $(nc c)", "socat d"]);
    assert.deepEqual(p.commands[0].words[0], "echo");
    assert.deepEqual(parseShell("echo $(nc c)").substitutions, ["nc c"]);
  });

  it("marks the commands that read the output of the one before them", () => {
    const piped = (s: string) => parseShell(s).commands.map((c) => [c.words[0], !!c.piped]);
    assert.deepEqual(piped("a | b |& c || d && e; f"), [
      ["a", false],
      ["b", true],
      ["c", true],
      ["d", false],
      ["e", false],
      ["f", false],
    ]);
    assert.deepEqual(piped("a |\n b; c | (d)"), [["a", false], ["b", true], ["c", false], ["d", true]]);
  });

  it("decodes C escapes as printf and echo -e do", () => {
    assert.equal(unescapeC("\\x63u\\162l\\tx\\n"), "curl\tx\n");
  });

  it("survives unclosed quotes and parentheses", () => {
    for (const s of ["echo 'abc", 'echo "abc', "echo $(abc", "echo `abc", "$'\\x", "a\\"]) {
      assert.ok(Array.isArray(parseShell(s).commands), s);
    }
  });
});
