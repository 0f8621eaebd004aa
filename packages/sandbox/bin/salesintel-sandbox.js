#!/usr/bin/env node
// The `salesintel-sandbox` command. A checked-in file (not dist/bin.js itself) so that `npm ci`
// links it into node_modules/.bin before the build has made dist.
import "../dist/bin.js"
