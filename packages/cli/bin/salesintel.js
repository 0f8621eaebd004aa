#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --heap-growing-percent=20 --max-semi-space-size=8
// The `salesintel` command. A checked-in file (not dist/bin.js itself) so that `npm ci` links it
// into node_modules/.bin before the build has made dist. The V8 flags keep the heap near what is
// live: it grows 20% past the live size after a collection (not V8's default factor of up to
// 4x), and the young generation's semi-spaces stay at 8 MB. On a large load the garbage of
// parsed records otherwise piles up to hundreds of megabytes; with them the loader stays under
// 200 MB at the same speed (packages/postgres/README.md, Benchmark).
import "../dist/bin.js"
