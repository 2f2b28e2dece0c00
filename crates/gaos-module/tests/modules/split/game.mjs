// A module split over local files (relative imports resolve from the importer).
import { rules } from "./lib/rules.mjs";
import { SEATS } from "./seats.mjs";

export default {
  game: { id: "test/split", version: "1", adapter: { id: "test/split/reducer", version: "1" } },
  seats: SEATS,
  levels: [{ id: "default", level: { goal: 2 } }],
  reducer: rules,
  commandToAction: (command, ctx) => ({ id: "Action 1", index: command.n, seat: ctx.participantId }),
};
