// Dash serves React (window.React); the bundle uses that copy instead of its own.
module.exports = window.React;
