# pteron_backend_option(NAME FOUND DOC MISSING): the option a delegate backend's find file
# defines (PTERON_XNNPACK, PTERON_VULKAN): ON by default where its dependencies were FOUND,
# and a configure error naming what is MISSING when forced ON without them.
function(pteron_backend_option name found doc missing)
  option(${name} "${doc}" ${found})
  if(${name} AND NOT found)
    message(FATAL_ERROR "${name} is ON but ${missing}, or this is a bare-metal build")
  endif()
endfunction()
