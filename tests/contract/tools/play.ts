// A client as a TypeScript author would write it: the types openapi-typescript made from
// the served openapi.yaml (./api.d.ts, written beside this file's build), called through
// openapi-fetch. It plays a beginner game to its end by asking for hints, reads the
// replay, and then the problem that a move on the finished game gets.
// Usage: node build/play.js BASE_URL; prints a JSON summary that the test checks.

import createClient from "openapi-fetch";
import type { components, paths } from "./api.js";

// Node's own global, declared here rather than through a package of Node's types.
declare const process: { argv: string[] };

type Status = components["schemas"]["Status"];
type Problem = components["schemas"]["Problem"];

const client = createClient<paths>({ baseUrl: process.argv[2] });

// The typed request of a new game: only the fields a caller chooses.
const request: components["schemas"]["NewGame"] = { preset: "beginner" };
const created = await client.POST("/games", { body: request });
if (created.data === undefined) {
  throw new Error(`no game: ${JSON.stringify(created.error)}`);
}
const { game, token } = created.data;
const path = { game_id: game.id };
const headers = { Authorization: `Bearer ${token}` };

let status: Status = game.status;
let moves = 0;
while (status !== "won" && status !== "lost" && moves < 500) {
  const hint = await client.POST("/games/{game_id}/hint", { params: { path }, headers });
  if (hint.data === undefined) {
    throw new Error(`no hint: ${JSON.stringify(hint.error)}`);
  }
  const cell = { x: hint.data.x, y: hint.data.y };
  const answer =
    hint.data.kind === "mine"
      ? await client.POST("/games/{game_id}/flag", { params: { path }, headers, body: { ...cell, mark: "flag" } })
      : await client.POST("/games/{game_id}/reveal", { params: { path }, headers, body: cell });
  if (answer.data === undefined) {
    throw new Error(`move refused: ${JSON.stringify(answer.error)}`);
  }
  status = answer.data.status;
  moves += 1;
}

const replay = await client.GET("/games/{game_id}/replay", { params: { path } });
if (replay.data === undefined) {
  throw new Error(`no replay: ${JSON.stringify(replay.error)}`);
}

const late = await client.POST("/games/{game_id}/reveal", {
  params: { path },
  headers,
  body: { x: 0, y: 0 },
});
const problem: Problem | undefined = late.error;

console.log(
  JSON.stringify({
    id: game.id,
    status,
    moves,
    replay: { status: replay.data.status, moves: replay.data.moves.length },
    problem: { status: late.response.status, type: late.response.headers.get("content-type"), code: problem?.code },
  }),
);
