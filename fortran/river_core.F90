! river_core.F90 - submodule river_core_impl of module river: River's core
! calls (river/core.h: init and finalize, errors, logging, version,
! timers; river/topo.h) and the helpers every submodule shares, whose
! interfaces the parent declares: river_check (the ierr convention: hand
! the code back, or error stop with the message), the C string
! conversions both ways (c_str, c_str_ptr, river_c_string), fetch_string
! (a caller-buffer string, length first) and bytes_from (a borrowed
! block copied into an allocatable byte array). Nothing here holds
! state: each call goes straight to C.
submodule (river) river_core_impl
  implicit none

  interface
    function river_init_c(argc, argv) bind(C, name='river_init')
      import :: c_int, c_ptr
      type(c_ptr), value :: argc, argv
      integer(c_int) :: river_init_c
    end function river_init_c
    function river_finalize_c() bind(C, name='river_finalize')
      import :: c_int
      integer(c_int) :: river_finalize_c
    end function river_finalize_c
    function river_initialized_c(flag) bind(C, name='river_initialized')
      import :: c_int
      integer(c_int), intent(out) :: flag
      integer(c_int) :: river_initialized_c
    end function river_initialized_c
    function river_get_version_c(major, minor, release) &
        bind(C, name='river_get_version')
      import :: c_int
      integer(c_int), intent(out) :: major, minor, release
      integer(c_int) :: river_get_version_c
    end function river_get_version_c
    function river_build_info_c(buf, len) bind(C, name='river_build_info')
      import :: c_int, c_char, c_size_t
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), intent(inout) :: len
      integer(c_int) :: river_build_info_c
    end function river_build_info_c
    function river_topo_describe_c(buf, len) &
        bind(C, name='river_topo_describe')
      import :: c_int, c_char, c_size_t
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), intent(inout) :: len
      integer(c_int) :: river_topo_describe_c
    end function river_topo_describe_c
    function river_node_name_c(buf, len) bind(C, name='river_node_name')
      import :: c_int, c_char, c_size_t
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), intent(inout) :: len
      integer(c_int) :: river_node_name_c
    end function river_node_name_c
    function river_topo_bind_c(comm, outcome) &
        bind(C, name='river__f_topo_bind')
      import :: c_int
      integer(c_int), value :: comm
      integer(c_int), intent(out) :: outcome
      integer(c_int) :: river_topo_bind_c
    end function river_topo_bind_c
    function river_strerror_c(err) bind(C, name='river_strerror')
      import :: c_int, c_ptr
      integer(c_int), value :: err
      type(c_ptr) :: river_strerror_c
    end function river_strerror_c
    function river_err_name_c(err) bind(C, name='river_err_name')
      import :: c_int, c_ptr
      integer(c_int), value :: err
      type(c_ptr) :: river_err_name_c
    end function river_err_name_c
    function river_log_c(level, msg) bind(C, name='river__f_log')
      import :: c_int, c_char
      integer(c_int), value :: level
      character(kind=c_char), intent(in) :: msg(*)
      integer(c_int) :: river_log_c
    end function river_log_c
    function river_log_set_level_c(level) bind(C, name='river_log_set_level')
      import :: c_int
      integer(c_int), value :: level
      integer(c_int) :: river_log_set_level_c
    end function river_log_set_level_c
    function river_log_get_level_c(level) bind(C, name='river_log_get_level')
      import :: c_int
      integer(c_int), intent(out) :: level
      integer(c_int) :: river_log_get_level_c
    end function river_log_get_level_c
    function river_log_parse_level_c(name, level) &
        bind(C, name='river_log_parse_level')
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), intent(out) :: level
      integer(c_int) :: river_log_parse_level_c
    end function river_log_parse_level_c
    function river_log_level_name_c(level) bind(C, name='river_log_level_name')
      import :: c_int, c_ptr
      integer(c_int), value :: level
      type(c_ptr) :: river_log_level_name_c
    end function river_log_level_name_c
    function river_log_set_handler_c(fn, ctx) &
        bind(C, name='river_log_set_handler')
      import :: c_int, c_funptr, c_ptr
      type(c_funptr), value :: fn
      type(c_ptr), value :: ctx
      integer(c_int) :: river_log_set_handler_c
    end function river_log_set_handler_c
    function river_wtime_c() bind(C, name='river_wtime')
      import :: c_double
      real(c_double) :: river_wtime_c
    end function river_wtime_c
    function river_timer_reset_c(t) bind(C, name='river_timer_reset')
      import :: c_int, river_timer
      type(river_timer), intent(inout) :: t
      integer(c_int) :: river_timer_reset_c
    end function river_timer_reset_c
    function river_timer_start_c(t) bind(C, name='river_timer_start')
      import :: c_int, river_timer
      type(river_timer), intent(inout) :: t
      integer(c_int) :: river_timer_start_c
    end function river_timer_start_c
    function river_timer_stop_c(t) bind(C, name='river_timer_stop')
      import :: c_int, river_timer
      type(river_timer), intent(inout) :: t
      integer(c_int) :: river_timer_stop_c
    end function river_timer_stop_c
    function river_timer_elapsed_c(t, seconds) &
        bind(C, name='river_timer_elapsed')
      import :: c_int, c_double, river_timer
      type(river_timer), intent(in) :: t
      real(c_double), intent(out) :: seconds
      integer(c_int) :: river_timer_elapsed_c
    end function river_timer_elapsed_c
    function river_parse_size_c(text, value) &
        bind(C, name='river_parse_size')
      import :: c_int, c_char, c_int64_t
      character(kind=c_char), intent(in) :: text(*)
      integer(c_int64_t), intent(out) :: value   ! C's uint64_t
      integer(c_int) :: river_parse_size_c
    end function river_parse_size_c
    function river_format_size_c(bytes, buf, len) &
        bind(C, name='river_format_size')
      import :: c_int, c_char, c_int64_t, c_size_t
      integer(c_int64_t), value :: bytes   ! C's uint64_t
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), value :: len
      integer(c_int) :: river_format_size_c
    end function river_format_size_c
    subroutine river_f_stop_c(rc, what) bind(C, name='river__f_stop')
      import :: c_int, c_char
      integer(c_int), value :: rc
      character(kind=c_char), intent(in) :: what(*)
    end subroutine river_f_stop_c
    function c_strlen(s) bind(C, name='strlen')
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: c_strlen
    end function c_strlen
  end interface

contains

  ! ---------------------------------------------- helpers of every submodule

  module procedure river_check
    ! Without ierr a failure ends the job: said once (river__f_stop in
    ! river_shim.c), exit status 1, no backtrace per rank.
    if (present(ierr)) then
      ierr = int(rc)
    else if (rc /= RIVER_SUCCESS) then
      call river_f_stop_c(int(rc, c_int), what // c_null_char)
    end if
  end procedure river_check

  module procedure c_str
    integer :: i
    do i = 1, len(s)
      cs(i) = s(i:i)
    end do
    cs(len(s) + 1) = c_null_char
  end procedure c_str

  module procedure c_str_ptr
    cs = c_str(s)
    ptr = c_loc(cs)
  end procedure c_str_ptr

  module procedure fetch_string
    character(kind=c_char) :: probe(1)
    character(kind=c_char), allocatable :: buf(:)
    integer(c_size_t) :: n
    integer :: i, tries
    n = 1
    rc = fill(h, d, probe, n)
    if (rc == RIVER_SUCCESS) then
      allocate(buf(1))  ! empty string fits the probe
      buf(1) = probe(1)
    end if
    ! A string that grew between the two calls (a directory listing
    ! can) is asked for again, a few times.
    tries = 0
    do while (rc == RIVER_ENOBUFS .and. tries < 8)
      if (allocated(buf)) deallocate(buf)
      allocate(buf(n))
      rc = fill(h, d, buf, n)
      tries = tries + 1
    end do
    if (rc /= RIVER_SUCCESS) return
    allocate(character(len=int(n)) :: str)
    do i = 1, int(n)
      str(i:i) = buf(i)
    end do
  end procedure fetch_string

  module procedure bytes_from
    integer(c_int8_t), pointer :: src(:)
    if (allocated(buf)) then
      if (size(buf, kind=c_size_t) /= nbytes) deallocate(buf)
    end if
    if (.not. allocated(buf)) allocate(buf(nbytes))
    if (nbytes > 0) then
      call c_f_pointer(r, src, [nbytes])
      buf(:) = src
    end if
  end procedure bytes_from

  module procedure river_c_string_ptr
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(ptr)) then
      str = ''
      return
    end if
    n = int(c_strlen(ptr))
    call c_f_pointer(ptr, chars, [n])
    allocate(character(len=n) :: str)
    do i = 1, n
      str(i:i) = chars(i)
    end do
  end procedure river_c_string_ptr

  module procedure river_c_string_chars
    integer :: i, n
    n = size(chars)
    do i = 1, size(chars)
      if (chars(i) == c_null_char) then
        n = i - 1
        exit
      end if
    end do
    allocate(character(len=n) :: str)
    do i = 1, n
      str(i:i) = chars(i)
    end do
  end procedure river_c_string_chars

  ! ------------------------------------------------------------ core calls

  ! string_fill wrappers for fetch_string (h and d unused).
  function build_info_fill(h, d, buf, len) result(rc)
    type(c_ptr), intent(in) :: h
    integer(c_int), intent(in) :: d
    character(kind=c_char), intent(out) :: buf(*)
    integer(c_size_t), intent(inout) :: len
    integer(c_int) :: rc
    rc = river_build_info_c(buf, len)
  end function build_info_fill

  function topo_fill(h, d, buf, len) result(rc)
    type(c_ptr), intent(in) :: h
    integer(c_int), intent(in) :: d
    character(kind=c_char), intent(out) :: buf(*)
    integer(c_size_t), intent(inout) :: len
    integer(c_int) :: rc
    rc = river_topo_describe_c(buf, len)
  end function topo_fill

  function node_name_fill(h, d, buf, len) result(rc)
    type(c_ptr), intent(in) :: h
    integer(c_int), intent(in) :: d
    character(kind=c_char), intent(out) :: buf(*)
    integer(c_size_t), intent(inout) :: len
    integer(c_int) :: rc
    rc = river_node_name_c(buf, len)
  end function node_name_fill

  module procedure river_init
    call river_check(river_init_c(c_null_ptr, c_null_ptr), 'river_init', ierr)
  end procedure river_init

  module procedure river_finalize
    call river_check(river_finalize_c(), 'river_finalize', ierr)
  end procedure river_finalize

  module procedure river_initialized
    integer(c_int) :: cflag, rc
    rc = river_initialized_c(cflag)
    if (rc == RIVER_SUCCESS) flag = cflag /= 0
    call river_check(rc, 'river_initialized', ierr)
  end procedure river_initialized

  module procedure river_get_version
    integer(c_int) :: cmaj, cmin, crel, rc
    rc = river_get_version_c(cmaj, cmin, crel)
    if (rc == RIVER_SUCCESS) then
      major = cmaj
      minor = cmin
      release = crel
    end if
    call river_check(rc, 'river_get_version', ierr)
  end procedure river_get_version

  module procedure river_build_info
    integer(c_int) :: rc
    call fetch_string(build_info_fill, c_null_ptr, 0_c_int, info, rc)
    call river_check(rc, 'river_build_info', ierr)
  end procedure river_build_info

  module procedure river_topo_describe
    integer(c_int) :: rc
    call fetch_string(topo_fill, c_null_ptr, 0_c_int, desc, rc)
    call river_check(rc, 'river_topo_describe', ierr)
  end procedure river_topo_describe

  module procedure river_node_name
    integer(c_int) :: rc
    call fetch_string(node_name_fill, c_null_ptr, 0_c_int, name, rc)
    call river_check(rc, 'river_node_name', ierr)
  end procedure river_node_name

  module procedure river_topo_bind
    integer(c_int) :: rc, out
    out = 0
    rc = river_topo_bind_c(int(comm%MPI_VAL, c_int), out)
    if (rc == RIVER_SUCCESS) outcome = out
    call river_check(rc, 'river_topo_bind', ierr)
  end procedure river_topo_bind

  module procedure river_strerror
    msg = river_c_string(river_strerror_c(int(err, c_int)))
  end procedure river_strerror

  module procedure river_err_name
    name = river_c_string(river_err_name_c(int(err, c_int)))
  end procedure river_err_name

  module procedure river_log
    call river_check(river_log_c(int(level, c_int), c_str(msg)), &
                     'river_log', ierr)
  end procedure river_log

  module procedure river_log_set_level
    call river_check(river_log_set_level_c(int(level, c_int)), &
                     'river_log_set_level', ierr)
  end procedure river_log_set_level

  module procedure river_log_get_level
    integer(c_int) :: clevel, rc
    rc = river_log_get_level_c(clevel)
    if (rc == RIVER_SUCCESS) level = clevel
    call river_check(rc, 'river_log_get_level', ierr)
  end procedure river_log_get_level

  module procedure river_log_parse_level
    integer(c_int) :: clevel, rc
    rc = river_log_parse_level_c(c_str(name), clevel)
    if (rc == RIVER_SUCCESS) level = clevel
    call river_check(rc, 'river_log_parse_level', ierr)
  end procedure river_log_parse_level

  module procedure river_log_level_name
    name = river_c_string(river_log_level_name_c(int(level, c_int)))
  end procedure river_log_level_name

  module procedure river_log_set_handler
    call river_check(river_log_set_handler_c(c_funloc(handler), ctx), &
                     'river_log_set_handler', ierr)
  end procedure river_log_set_handler

  module procedure river_log_reset_handler
    call river_check(river_log_set_handler_c(c_null_funptr, c_null_ptr), &
                     'river_log_reset_handler', ierr)
  end procedure river_log_reset_handler

  module procedure river_parse_size
    integer(c_int64_t) :: v
    integer(c_int) :: rc
    v = 0
    rc = river_parse_size_c(c_str(text), v)
    ! C's uint64_t from 2**63 reads negative here: too large for value
    if (rc == RIVER_SUCCESS .and. v < 0) rc = RIVER_EOVERFLOW
    if (rc == RIVER_SUCCESS) value = v
    call river_check(rc, 'river_parse_size', ierr)
  end procedure river_parse_size

  module procedure river_format_size
    character(kind=c_char) :: buf(32)   ! RIVER_SIZE_TEXT_MAX is less
    if (river_format_size_c(max(bytes, 0_c_int64_t), buf, &
                            int(size(buf), c_size_t)) == RIVER_SUCCESS) then
      text = river_c_string(buf)
    else
      text = ''
    end if
  end procedure river_format_size

  module procedure river_wtime
    t = river_wtime_c()
  end procedure river_wtime

  module procedure river_timer_reset
    call river_check(river_timer_reset_c(t), 'river_timer_reset', ierr)
  end procedure river_timer_reset

  module procedure river_timer_start
    call river_check(river_timer_start_c(t), 'river_timer_start', ierr)
  end procedure river_timer_start

  module procedure river_timer_stop
    call river_check(river_timer_stop_c(t), 'river_timer_stop', ierr)
  end procedure river_timer_stop

  module procedure river_timer_elapsed
    integer(c_int) :: rc
    real(c_double) :: s
    rc = river_timer_elapsed_c(t, s)
    if (rc == RIVER_SUCCESS) seconds = s
    call river_check(rc, 'river_timer_elapsed', ierr)
  end procedure river_timer_elapsed

end submodule river_core_impl
