console.log("postinstall: nothing yet")
