! river_flow.F90 - submodule river_flow_impl of module river: flows
! (river/flow.h). The handle type river_flow keeps the flow's c_ptr;
! river_flow_attach builds C's river_edge_opts (edge_opts_c) from its
! optional arguments; river_flow_create and river_flow_load go through
! shims (fortran/river_shim.c) that turn the Fortran communicator handle
! into a C one; river_flow_load passes its params as an array of
! pointers to NUL-terminated copies. The C functions' outputs are
! declared intent(inout) below: the bodies set them before each call
! and read them whatever the result (intent(out) would let the compiler
! drop those stores where C leaves an output untouched).
submodule (river) river_flow_impl
  implicit none

  ! C's river_edge_opts, initialised as RIVER_EDGE_OPTS_INIT.
  type, bind(C) :: edge_opts_c
    integer(c_int) :: kind = RIVER_EDGE_DQ
    integer(c_int) :: policy = RIVER_DQ_PUSH
    integer(c_int) :: by = RIVER_BY_HASH
    type(c_ptr) :: key = c_null_ptr
    integer(c_int) :: credits = 0
    integer(c_size_t) :: message_size = 0
    integer(c_int) :: from_output = -1
    integer(c_int) :: to_input = -1
    type(c_ptr) :: filter = c_null_ptr
    integer(c_int) :: filter_at = RIVER_FILTER_AT_SOURCE
    real(c_double) :: pace = 0.0_c_double
  end type edge_opts_c

  ! edge_opts_c must be the size of C's river_edge_opts (see layout_ok in
  ! river).
  integer, parameter :: opts_layout_ok = 1 / merge(1, 0, &
      c_sizeof(edge_opts_c()) == RIVER__SIZEOF_EDGE_OPTS)

  interface
    ! river/flow.h (create and load through shims: comm is an MPI_Fint)
    function river_flow_create_c(comm, out) &
        bind(C, name='river__f_flow_create')
      import :: c_int, c_ptr
      integer(c_int), value :: comm
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: river_flow_create_c
    end function river_flow_create_c
    function river_flow_origin_c(f, where) bind(C, name='river_flow_origin')
      import :: c_int, c_ptr
      type(c_ptr), value :: f, where
      integer(c_int) :: river_flow_origin_c
    end function river_flow_origin_c
    function river_flow_place_c(f, stage, module, ranks, nranks) &
        bind(C, name='river_flow_place')
      import :: c_char, c_int, c_ptr
      type(c_ptr), value :: f
      character(kind=c_char), intent(in) :: stage(*), module(*)
      integer(c_int), intent(in) :: ranks(*)
      integer(c_int), value :: nranks
      integer(c_int) :: river_flow_place_c
    end function river_flow_place_c
    function river_flow_arg_c(f, stage, name, value) &
        bind(C, name='river_flow_arg')
      import :: c_char, c_int, c_ptr
      type(c_ptr), value :: f
      character(kind=c_char), intent(in) :: stage(*), name(*), value(*)
      integer(c_int) :: river_flow_arg_c
    end function river_flow_arg_c
    function river_flow_attach_c(f, from, to, opts) &
        bind(C, name='river_flow_attach')
      import :: c_char, c_int, c_ptr, edge_opts_c
      type(c_ptr), value :: f
      character(kind=c_char), intent(in) :: from(*), to(*)
      type(edge_opts_c), intent(in) :: opts
      integer(c_int) :: river_flow_attach_c
    end function river_flow_attach_c
    function river_flow_check_c(f) bind(C, name='river_flow_check')
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int) :: river_flow_check_c
    end function river_flow_check_c
    function river_flow_progress_c(f, label, total) &
        bind(C, name='river_flow_progress')
      import :: c_char, c_int, c_int64_t, c_ptr
      type(c_ptr), value :: f
      character(kind=c_char), intent(in) :: label(*)
      integer(c_int64_t), value :: total
      integer(c_int) :: river_flow_progress_c
    end function river_flow_progress_c
    function river_flow_go_c(f) bind(C, name='river_flow_go')
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int) :: river_flow_go_c
    end function river_flow_go_c
    function river_flow_go_async_c(f) bind(C, name='river_flow_go_async')
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int) :: river_flow_go_async_c
    end function river_flow_go_async_c
    function river_flow_test_c(f, done) bind(C, name='river_flow_test')
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int), intent(inout) :: done
      integer(c_int) :: river_flow_test_c
    end function river_flow_test_c
    function river_flow_wait_c(f) bind(C, name='river_flow_wait')
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int) :: river_flow_wait_c
    end function river_flow_wait_c
    function river_flow_stage_stats_c(f, stage, st) &
        bind(C, name='river_flow_stage_stats')
      import :: c_char, c_int, c_ptr, river_stage_stats
      type(c_ptr), value :: f
      character(kind=c_char), intent(in) :: stage(*)
      type(river_stage_stats), intent(inout) :: st
      integer(c_int) :: river_flow_stage_stats_c
    end function river_flow_stage_stats_c
    function river_flow_nstages_c(f, n) bind(C, name='river_flow_nstages')
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int), intent(inout) :: n
      integer(c_int) :: river_flow_nstages_c
    end function river_flow_nstages_c
    function river_flow_stage_c(f, i, name, module, ranks, nranks) &
        bind(C, name='river_flow_stage')
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int), value :: i
      type(c_ptr), intent(inout) :: name, module, ranks
      integer(c_int), intent(inout) :: nranks
      integer(c_int) :: river_flow_stage_c
    end function river_flow_stage_c
    function river_flow_dot_c(f, buf, len) bind(C, name='river_flow_dot')
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), value :: f
      character(kind=c_char), intent(inout) :: buf(*)
      integer(c_size_t), intent(inout) :: len
      integer(c_int) :: river_flow_dot_c
    end function river_flow_dot_c
    function river_flow_load_c(comm, path, params, nparams, out) &
        bind(C, name='river__f_flow_load')
      import :: c_char, c_int, c_ptr
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), intent(in) :: params(*)
      integer(c_int), value :: nparams
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: river_flow_load_c
    end function river_flow_load_c
    function river_flow_destroy_c(f) bind(C, name='river_flow_destroy')
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int) :: river_flow_destroy_c
    end function river_flow_destroy_c
  end interface

contains

  ! A string_fill for fetch_string: flow h as a Graphviz graph.
  function flow_dot_fill(h, d, buf, len) result(rc)
    type(c_ptr), intent(in) :: h
    integer(c_int), intent(in) :: d
    character(kind=c_char), intent(out) :: buf(*)
    integer(c_size_t), intent(inout) :: len
    integer(c_int) :: rc
    rc = river_flow_dot_c(h, buf, len)
  end function flow_dot_fill

  module procedure river_flow_create
    type(c_ptr) :: out
    integer(c_int) :: rc
    out = c_null_ptr
    rc = river_flow_create_c(int(comm%MPI_VAL, c_int), out)
    if (rc == RIVER_SUCCESS) flow%ptr = out
    call river_check(rc, 'river_flow_create', ierr)
  end procedure river_flow_create

  module procedure river_flow_origin
    character(kind=c_char), allocatable, target :: w(:)
    type(c_ptr) :: p
    p = c_null_ptr
    if (present(where)) call c_str_ptr(where, w, p)
    call river_check(river_flow_origin_c(flow%ptr, p), 'river_flow_origin', &
                     ierr)
  end procedure river_flow_origin

  module procedure river_flow_place
    integer(c_int) :: r(max(size(ranks), 1))
    r = 0
    r(1:size(ranks)) = int(ranks, c_int)
    call river_check(river_flow_place_c(flow%ptr, c_str(stage), c_str(module), &
                                        r, int(size(ranks), c_int)), &
                     'river_flow_place', ierr)
  end procedure river_flow_place

  module procedure river_flow_arg
    call river_check(river_flow_arg_c(flow%ptr, c_str(stage), c_str(name), &
                                      c_str(value)), 'river_flow_arg', ierr)
  end procedure river_flow_arg

  module procedure river_flow_attach
    type(edge_opts_c) :: opts
    character(kind=c_char), allocatable, target :: key_c(:), filter_c(:)
    if (present(kind)) opts%kind = int(kind, c_int)
    if (present(policy)) opts%policy = int(policy, c_int)
    if (present(by)) opts%by = int(by, c_int)
    if (present(key)) call c_str_ptr(key, key_c, opts%key)
    if (present(credits)) opts%credits = int(credits, c_int)
    if (present(message_size)) opts%message_size = message_size
    if (present(from_output)) opts%from_output = int(from_output, c_int)
    if (present(to_input)) opts%to_input = int(to_input, c_int)
    if (present(filter)) call c_str_ptr(filter, filter_c, opts%filter)
    if (present(filter_at)) opts%filter_at = int(filter_at, c_int)
    if (present(pace)) opts%pace = pace
    call river_check(river_flow_attach_c(flow%ptr, c_str(from), c_str(to), &
                                         opts), 'river_flow_attach', ierr)
  end procedure river_flow_attach

  module procedure river_flow_check
    call river_check(river_flow_check_c(flow%ptr), 'river_flow_check', ierr)
  end procedure river_flow_check

  module procedure river_flow_progress
    call river_check(river_flow_progress_c(flow%ptr, c_str(label), &
                                           total_records), &
                     'river_flow_progress', ierr)
  end procedure river_flow_progress

  module procedure river_flow_go
    call river_check(river_flow_go_c(flow%ptr), 'river_flow_go', ierr)
  end procedure river_flow_go

  module procedure river_flow_go_async
    call river_check(river_flow_go_async_c(flow%ptr), 'river_flow_go_async', &
                     ierr)
  end procedure river_flow_go_async

  module procedure river_flow_test
    integer(c_int) :: d, rc
    d = 0
    rc = river_flow_test_c(flow%ptr, d)
    done = d /= 0
    call river_check(rc, 'river_flow_test', ierr)
  end procedure river_flow_test

  module procedure river_flow_wait
    call river_check(river_flow_wait_c(flow%ptr), 'river_flow_wait', ierr)
  end procedure river_flow_wait

  module procedure river_flow_stage_stats
    type(river_stage_stats) :: s
    integer(c_int) :: rc
    rc = river_flow_stage_stats_c(flow%ptr, c_str(stage), s)
    if (rc == RIVER_SUCCESS) stats = s
    call river_check(rc, 'river_flow_stage_stats', ierr)
  end procedure river_flow_stage_stats

  module procedure river_flow_nstages
    integer(c_int) :: k, rc
    k = 0
    rc = river_flow_nstages_c(flow%ptr, k)
    n = int(k)
    call river_check(rc, 'river_flow_nstages', ierr)
  end procedure river_flow_nstages

  module procedure river_flow_stage
    type(c_ptr) :: np, mp, rp
    integer(c_int) :: nr, rc
    integer(c_int), pointer :: r(:)
    rc = river_flow_stage_c(flow%ptr, int(i, c_int), np, mp, rp, nr)
    if (rc == RIVER_SUCCESS) then
      if (present(name)) name = river_c_string(np)
      if (present(module)) module = river_c_string(mp)
      if (present(ranks)) then
        allocate(ranks(nr))
        if (nr > 0) then
          call c_f_pointer(rp, r, [nr])
          ranks = int(r)
        end if
      end if
    end if
    call river_check(rc, 'river_flow_stage', ierr)
  end procedure river_flow_stage

  module procedure river_flow_dot
    integer(c_int) :: rc
    call fetch_string(flow_dot_fill, flow%ptr, 0_c_int, dot, rc)
    call river_check(rc, 'river_flow_dot', ierr)
  end procedure river_flow_dot

  module procedure river_flow_load
    character(kind=c_char), allocatable, target :: text(:, :)
    type(c_ptr), allocatable :: ptrs(:)
    type(c_ptr) :: out
    integer(c_int) :: rc
    integer :: i, j, n, l
    n = 0
    l = 0
    if (present(params)) then
      n = size(params)
      l = len(params)
    end if
    allocate(text(l + 1, max(n, 1)), ptrs(max(n, 1)))
    ptrs = c_null_ptr
    do i = 1, n
      do j = 1, l
        text(j, i) = params(i)(j:j)
      end do
      text(len_trim(params(i)) + 1, i) = c_null_char
      ptrs(i) = c_loc(text(1, i))
    end do
    out = c_null_ptr
    rc = river_flow_load_c(int(comm%MPI_VAL, c_int), c_str(path), ptrs, &
                           int(n, c_int), out)
    if (rc == RIVER_SUCCESS) flow%ptr = out
    call river_check(rc, 'river_flow_load', ierr)
  end procedure river_flow_load

  module procedure river_flow_destroy
    integer(c_int) :: rc
    rc = river_flow_destroy_c(flow%ptr)
    flow%ptr = c_null_ptr
    call river_check(rc, 'river_flow_destroy', ierr)
  end procedure river_flow_destroy

end submodule river_flow_impl
