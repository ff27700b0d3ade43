// Dash serves ReactDOM 18 (window.ReactDOM), which still carries createRoot.
module.exports = window.ReactDOM;
