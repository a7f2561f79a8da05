#!/usr/bin/env python3
"""Command tools for the notes adapter.

hermit runs `python3 tools/notes.py <action>` per call, writes the call's arguments as JSON on
stdin and returns stdout. A non-zero exit becomes an error result with stderr's tail.
"""
import json
import os
import sys
import time

NOTES = os.environ.get("NOTES_FILE", ".notes.jsonl")


def load():
    try:
        with open(NOTES, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def main():
    action = sys.argv[1]
    args = json.load(sys.stdin)
    if action == "add":
        note = {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), "text": args["text"], "tags": args.get("tags", [])}
        with open(NOTES, "a", encoding="utf-8") as f:
            f.write(json.dumps(note) + "\n")
        print(f"noted ({len(load())} notes)")
    elif action == "search":
        q = args["query"].lower()
        hits = [n for n in load() if q in n["text"].lower() or q in [t.lower() for t in n["tags"]]]
        print("\n".join(f"{n['time']}  {n['text']}" for n in hits) or "no notes match")
    elif action == "list":
        notes = load()[-int(args.get("limit", 10)):]
        # A JSON object on stdout becomes structured content (the tool declares an output schema).
        print(json.dumps({"notes": notes}))
    else:
        print(f"unknown action {action}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
