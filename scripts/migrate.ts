// `npm run migrate`: the `bims migrate` command, whose code lives in src/ (src/runtime/commands/migrate.ts).
import '../src/runtime/commands/migrate.js';
