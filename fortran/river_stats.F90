! river_stats.F90 - submodule river_stats_impl of module river: the
! stats file (river/stats.h). river_stats_create goes through a shim
! (fortran/river_shim.c) that turns the Fortran communicator handle into
! a C one; an absent label or command is passed as NULL.
submodule (river) river_stats_impl
  implicit none

  interface
    function river_stats_create_c(comm, command, out) &
        bind(C, name='river__f_stats_create')
      import :: c_int, c_ptr
      integer(c_int), value :: comm
      type(c_ptr), value :: command
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: river_stats_create_c
    end function river_stats_create_c
    function river_stats_add_flow_c(s, f, label) &
        bind(C, name='river_stats_add_flow')
      import :: c_int, c_ptr
      type(c_ptr), value :: s, f, label
      integer(c_int) :: river_stats_add_flow_c
    end function river_stats_add_flow_c
    function river_stats_add_gd_c(s, gd, label) &
        bind(C, name='river_stats_add_gd')
      import :: c_int, c_ptr
      type(c_ptr), value :: s, gd, label
      integer(c_int) :: river_stats_add_gd_c
    end function river_stats_add_gd_c
    function river_stats_add_work_c(s, label, records, bytes, seconds) &
        bind(C, name='river_stats_add_work')
      import :: c_char, c_double, c_int, c_int64_t, c_ptr
      type(c_ptr), value :: s
      character(kind=c_char), intent(in) :: label(*)
      integer(c_int64_t), value :: records, bytes
      real(c_double), value :: seconds
      integer(c_int) :: river_stats_add_work_c
    end function river_stats_add_work_c
    function river_stats_add_number_c(s, key, value) &
        bind(C, name='river_stats_add_number')
      import :: c_char, c_double, c_int, c_ptr
      type(c_ptr), value :: s
      character(kind=c_char), intent(in) :: key(*)
      real(c_double), value :: value
      integer(c_int) :: river_stats_add_number_c
    end function river_stats_add_number_c
    function river_stats_write_c(s, path) bind(C, name='river_stats_write')
      import :: c_char, c_int, c_ptr
      type(c_ptr), value :: s
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int) :: river_stats_write_c
    end function river_stats_write_c
    function river_stats_destroy_c(s) bind(C, name='river_stats_destroy')
      import :: c_int, c_ptr
      type(c_ptr), value :: s
      integer(c_int) :: river_stats_destroy_c
    end function river_stats_destroy_c
  end interface

contains

  module procedure river_stats_create
    character(kind=c_char), allocatable, target :: c(:)
    type(c_ptr) :: out, p
    integer(c_int) :: rc
    out = c_null_ptr
    p = c_null_ptr
    if (present(command)) call c_str_ptr(command, c, p)
    rc = river_stats_create_c(int(comm%MPI_VAL, c_int), p, out)
    if (rc == RIVER_SUCCESS) stats%ptr = out
    call river_check(rc, 'river_stats_create', ierr)
  end procedure river_stats_create

  module procedure river_stats_add_flow
    character(kind=c_char), allocatable, target :: l(:)
    type(c_ptr) :: p
    p = c_null_ptr
    if (present(label)) call c_str_ptr(label, l, p)
    call river_check(river_stats_add_flow_c(stats%ptr, flow%ptr, p), &
                     'river_stats_add_flow', ierr)
  end procedure river_stats_add_flow

  module procedure river_stats_add_gd
    character(kind=c_char), allocatable, target :: l(:)
    type(c_ptr) :: p
    p = c_null_ptr
    if (present(label)) call c_str_ptr(label, l, p)
    call river_check(river_stats_add_gd_c(stats%ptr, gd%ptr, p), &
                     'river_stats_add_gd', ierr)
  end procedure river_stats_add_gd

  module procedure river_stats_add_work
    call river_check(river_stats_add_work_c(stats%ptr, c_str(label), &
                                            records, bytes, seconds), &
                     'river_stats_add_work', ierr)
  end procedure river_stats_add_work

  module procedure river_stats_add_number
    call river_check(river_stats_add_number_c(stats%ptr, c_str(key), value), &
                     'river_stats_add_number', ierr)
  end procedure river_stats_add_number

  module procedure river_stats_write
    call river_check(river_stats_write_c(stats%ptr, c_str(path)), &
                     'river_stats_write', ierr)
  end procedure river_stats_write

  module procedure river_stats_destroy
    integer(c_int) :: rc
    rc = river_stats_destroy_c(stats%ptr)
    stats%ptr = c_null_ptr
    call river_check(rc, 'river_stats_destroy', ierr)
  end procedure river_stats_destroy

end submodule river_stats_impl
