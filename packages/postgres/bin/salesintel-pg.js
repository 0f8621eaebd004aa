#!/usr/bin/env -S node --heap-growing-percent=20
// The `salesintel-pg` command. A checked-in file (not dist/bin.js itself) so that `npm ci` links it
// into node_modules/.bin before the build has made dist. The V8 flag makes the heap grow 20%
// past what is live after a collection, not the default factor of up to 4x: on a large load the
// garbage of parsed records otherwise piles up to hundreds of megabytes (see
// packages/postgres/README.md, Benchmark).
import "../dist/bin.js"
