# ai_hwaccel_pc_paths(<pc_dir> <prefix_var> <includedir_var> [<libdir_var>])
#
# The `prefix=`, `includedir=` and `libdir=` values of a .pc file that will be installed
# to the (usually relative) folder <pc_dir>. A relative <pc_dir> gives a prefix taken from
# where the file lies: pkg-config sets ${pcfiledir} to the folder it read the file from,
# so `cmake --install --prefix DIR` and a prefix moved after installing both work. A
# directory given as an absolute path is written as it is, since moving the prefix does
# not move it.
function(ai_hwaccel_pc_paths pc_dir prefix_var includedir_var)
  if(IS_ABSOLUTE "${pc_dir}")
    set(prefix "${CMAKE_INSTALL_PREFIX}")
  else()
    file(RELATIVE_PATH up "/root/${pc_dir}" "/root")
    string(REGEX REPLACE "/$" "" up "${up}")
    set(prefix "\${pcfiledir}/${up}")
  endif()
  set(${prefix_var} "${prefix}" PARENT_SCOPE)
  set(which INCLUDEDIR)
  set(vars "${includedir_var}")
  if(ARGC GREATER 3)
    list(APPEND which LIBDIR)
    list(APPEND vars "${ARGV3}")
  endif()
  foreach(dir var IN ZIP_LISTS which vars)
    if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
      set(${var} "${CMAKE_INSTALL_${dir}}" PARENT_SCOPE)
    else()
      set(${var} "\${prefix}/${CMAKE_INSTALL_${dir}}" PARENT_SCOPE)
    endif()
  endforeach()
endfunction()
