// `npm run reextract`: the `bims reextract` command, whose code lives in src/ (src/runtime/commands/reextract.ts).
import '../src/runtime/commands/reextract.js';
