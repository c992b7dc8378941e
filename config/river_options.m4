# River's build options: sanitizers and warnings.

# RIVER_ENABLE_SANITIZERS: --enable-sanitizers builds everything with
# AddressSanitizer and UndefinedBehaviorSanitizer; any UB report aborts.
AC_DEFUN([RIVER_ENABLE_SANITIZERS], [
  AC_ARG_ENABLE([sanitizers],
    [AS_HELP_STRING([--enable-sanitizers],
       [build library, apps and tests with ASan and UBSan])],
    [], [enable_sanitizers=no])
  RIVER_SAN_FLAGS=
  AS_IF([test "x$enable_sanitizers" = xyes], [
    RIVER_SAN_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
    river_save_CFLAGS=$CFLAGS
    CFLAGS="$CFLAGS $RIVER_SAN_FLAGS"
    AC_MSG_CHECKING([whether $CC supports $RIVER_SAN_FLAGS])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])], [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no])
       AC_MSG_ERROR([--enable-sanitizers: $CC cannot build with ASan/UBSan])])
    CFLAGS=$river_save_CFLAGS
  ])
  AC_SUBST([RIVER_SAN_FLAGS])
  AM_CONDITIONAL([RIVER_SANITIZERS], [test "x$enable_sanitizers" = xyes])
])

# RIVER_WARNINGS: the warning set River's own C code is held to.
# (-Wno-format-truncation: River checks snprintf results for truncation.)
AC_DEFUN([RIVER_WARNINGS], [
  RIVER_WARN_CFLAGS="-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wno-format-truncation -Wno-unused-parameter"
  AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors])],
    [AS_IF([test "x$enableval" = xyes],
           [RIVER_WARN_CFLAGS="$RIVER_WARN_CFLAGS -Werror"])])
  AC_SUBST([RIVER_WARN_CFLAGS])
])
