// Stand-in for the Excalidraw locales we do not ship (the canvas always runs in English).
export default {};
