#!/usr/bin/env -S MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 node --heap-growing-percent=20 --max-semi-space-size=8 --liftoff-only --expose-gc
// The `salesintel` command. A checked-in file (not dist/bin.js itself) so that `npm ci` links it
// into node_modules/.bin before the build has made dist. The V8 flags keep the heap near what is
// live: it grows 20% past the live size after a collection (not V8's default factor of up to
// 4x), and the young generation's semi-spaces stay at 8 MB. On a large load the garbage of
// parsed records otherwise piles up to hundreds of megabytes; with them the loader stays under
// 200 MB at the same speed (packages/postgres/README.md, Benchmark). `--liftoff-only` runs
// embedded PGlite's WebAssembly on V8's baseline code only: optimising its hot functions held
// ~50 MB more at the peak (compiler memory and a second copy of the code) and took more CPU than
// it saved in a sync (packages/postgres/README.md, "Embedded PGlite"). MALLOC_MMAP_THRESHOLD_
// keeps buffers of 128 KB or more out of malloc's heap (given back to the system when freed, not
// left as holes in it), and `--expose-gc` lets the PGlite worker collect its dead buffers after
// each request (src/PGliteWorker.js): with the worker's buffer moved back and forth and
// smaller Postgres buffers and young generation, a 150,000-contact PGlite sync peaked at 252 MB
// where it took 307.
import "../dist/bin.js"
