/* The Run a benchmark page's model picker (sweepbench.web.bench_picker): Mantine's Autocomplete
   puts an option's label in the field, and the field must hold the model id, so each option's
   label is its id and its text ("<name> · $in in / $out out per 1M tokens · <size>") is drawn
   here, with the id under it. The search matches every typed word against the id and the
   text, and keeps Mantine's limit. */
(function () {
  var functions = (window.dashMantineFunctions = window.dashMantineFunctions || {});

  functions.sweepbenchModelOption = function (props) {
    var option = props.option;
    var h = window.React.createElement;
    if (!option.text) {
      return option.label;
    }
    return h(
      "div",
      { className: "sweepbench-model-option" },
      h("div", null, option.text),
      h("div", { style: { fontSize: "11px", opacity: 0.65 } }, option.value)
    );
  };

  functions.sweepbenchModelFilter = function (props) {
    var words = (props.search || "").toLowerCase().split(/\s+/).filter(Boolean);
    var limit = props.limit === undefined || props.limit === null ? Infinity : props.limit;
    var found = [];
    for (var i = 0; i < props.options.length && found.length < limit; i += 1) {
      var option = props.options[i];
      if (option.group !== undefined) {
        continue; // the picker lists no groups
      }
      var haystack = (option.value + " " + (option.text || "")).toLowerCase();
      if (words.every(function (word) { return haystack.indexOf(word) !== -1; })) {
        found.push(option);
      }
    }
    return found;
  };
})();
