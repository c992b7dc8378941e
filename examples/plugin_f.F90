! plugin_f.F90 - a plugin written in Fortran: a shared library whose
! entry point, river_plugin_init (bind(C)), registers its module with
! module river (doc/modules.md, "Plugins"):
!
!   keep_odd_f  1 input, 1 output: passes on the records whose key's
!               first byte is odd
!
! Build it (an installed River; see doc/building.md):
!
!   mpifort -shared -fPIC $(pkg-config --cflags river-fortran) \
!           plugin_f.F90 $(pkg-config --libs river-fortran) -o plugin_f.so
!   river-mpirun -n 3 river run --plugin ./plugin_f.so plugin_f.yaml
module plugin_f
  use, intrinsic :: iso_c_binding
  use river
  implicit none
  private
  public :: river_plugin_init

contains

  ! The entry point River calls when it loads the library.
  integer(c_int) function river_plugin_init() bind(C, name='river_plugin_init')
    integer :: ierr
    call river_module_register('keep_odd_f', keep_odd_f, min_inputs=1, &
        max_inputs=1, min_outputs=1, max_outputs=1, &
        doc='pass on the records whose key starts with an odd byte ' // &
            '(a Fortran plugin: examples/plugin_f.F90)', ierr=ierr)
    river_plugin_init = int(ierr, c_int)
  end function river_plugin_init

  integer(c_int) function keep_odd_f(ctx) bind(C)
    type(c_ptr), value :: ctx
    type(river_schema) :: s
    type(c_ptr) :: recs
    integer(c_int8_t), pointer :: b(:)
    integer(c_size_t) :: n, rs, k
    integer :: rc

    call river_input_schema(ctx, 0, s, rc)
    if (rc == RIVER_SUCCESS) call river_schema_record_size(s, rs, rc)
    call river_schema_destroy(s)
    do while (rc == RIVER_SUCCESS)
      call river_get(ctx, 0, recs, n, rc)
      if (rc /= RIVER_SUCCESS) exit
      call c_f_pointer(recs, b, [n * rs])
      do k = 0, n - 1
        if (iand(int(b(k * rs + 1)), 1) == 1) then
          call river_put(ctx, 0, c_loc(b(k * rs + 1)), 1_c_size_t, rc)
          if (rc /= RIVER_SUCCESS) exit
        end if
      end do
    end do
    if (rc == RIVER_EOS) rc = RIVER_SUCCESS
    keep_odd_f = int(rc, c_int)
  end function keep_odd_f
end module plugin_f
