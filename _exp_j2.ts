import { setJson, removeJson, type Created } from "./src/hosts/edit/json.ts";
const cases = [
  `{}`, `{}\n`, `{\n}\n`, `{\n  // comment\n  "a": 1\n}\n`,
  `{\n  "mcpServers": {\n    "x": { "command": "y" } // trailing\n  }\n}\n`,
  `{\n  "mcpServers": {}\n}\n`, `{\n  "mcpServers": {\n  }\n}\n`, ``, `{ "a": 1, }`, `{ "a": 1 }`,
  `{\r\n\t"mcpServers": {\r\n\t\t"x": 1,\r\n\t},\r\n}\r\n`, `{"mcpServers":{"x":1}}`,
  `{\n  "mcpServers": {\n    // only a comment\n  }\n}\n`,
];
const v = { command: "/bin/hermit", args: ["serve", "/a b"] };
for (const c of cases) {
  const created: Created = { containers: [], interiors: {} };
  const t1 = setJson(c, ["mcpServers", "notes"], v, created);
  JSON.parse(t1.replace(/\/\/.*$/mg, "").replace(/,(\s*[}\]])/g, "$1"));
  let t2 = removeJson(t1, ["mcpServers", "notes"], created.interiors);
  for (const ct of [...created.containers].reverse()) t2 = removeJson(t2, ct, created.interiors);
  console.log(JSON.stringify(c), t2 === c ? "EXACT" : "DIFF " + JSON.stringify(t2));
  if (process.env.V) console.log(t1);
}
