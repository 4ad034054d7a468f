'use strict';
async function shadowSuite() { throw new Error('not yet'); }
module.exports = { shadowSuite };
